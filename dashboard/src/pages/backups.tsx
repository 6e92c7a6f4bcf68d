// Backups: the ones kept on the server (create, refreshed until ready, download, delete) and a
// fresh one downloaded directly. On a database Plinth does not run itself, the API's 501 says
// what to use instead.
import { useEffect, useState } from 'preact/hooks';
import { api, enc, request } from '../api';
import { Grid } from '../grid/grid';
import { ConfirmDialog, ErrorBox, PageHeader, toast, useAction, useLoad } from '../ui';
import { LoadState } from './notavailable';

interface Kept {
  name: string;
  size: number;
  createdAt: string;
  status: 'running' | 'ready' | 'failed';
  error?: string;
}

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

/** Saves an answer's body as a file on this computer, under the name its Content-Disposition gives. */
async function save(r: Response, fallback: string): Promise<string> {
  const blob = await r.blob();
  const name = /filename="?([^";]+)/.exec(r.headers.get('content-disposition') ?? '')?.[1] ?? fallback;
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
  return `${name} downloaded (${mib(blob.size)}). Restore it with "npm run plinth -- restore ${name}".`;
}

function Status({ b }: { b: Kept }) {
  if (b.status === 'running') return <span class="muted">running…</span>;
  if (b.status === 'ready') return <span class="badge">ready</span>;
  return (
    <>
      <span class="badge bad">failed</span> {b.error}
    </>
  );
}

export function Backups() {
  const { data, error, reload } = useLoad(() => api<Kept[]>('/api/admin/backups'), []);
  const act = useAction();
  const running = data?.some((b) => b.status === 'running') ?? false;
  useEffect(() => {
    if (!running) return;
    const id = setInterval(reload, 1500);
    return () => clearInterval(id);
  }, [running]);
  const create = () =>
    act.run(async () => {
      await api('/api/admin/backups', { method: 'POST' });
      toast('Backup started: it is listed below, ready to download when it says so.');
      reload();
    });
  const download = (b: Kept) =>
    act.run(async () => toast(await save(await request(`/api/admin/backups/${enc(b.name)}`), b.name)));
  const [removing, setRemoving] = useState<Kept | null>(null);
  const remove = (b: Kept) => setRemoving(b);
  const direct = () =>
    act.run(async () =>
      toast(await save(await request('/api/admin/backup', { method: 'POST' }), 'plinth-backup.tar.gz')),
    );
  return (
    <section class="stack">
      <PageHeader
        title="Backups"
        description="A backup of the running server: the embedded database and local storage as one .tar.gz. Backups made here are kept on the server (the newest BACKUP_KEEP of them, in BACKUP_DIR); a direct download goes to this computer only."
      />
      <LoadState error={error} what="Backups kept on the server" endpoint="GET /api/admin/backups">
        {data !== null && (
          <>
            <div class="actions">
              <button type="button" class="primary" disabled={act.busy || running} onClick={() => void create()}>
                {running ? 'Backing up…' : 'Create backup'}
              </button>
              <button type="button" disabled={act.busy} onClick={() => void direct()}>
                Download a new backup directly
              </button>
            </div>
            <ErrorBox error={act.error} />
            <Grid<Kept>
              label="Backups kept on the server"
              rows={data}
              rowKey={(b) => b.name}
              empty="No backup on the server yet."
              columns={[
                { key: 'name', label: 'Backup', cell: (b) => <code>{b.name}</code> },
                {
                  key: 'createdAt',
                  label: 'Created',
                  cell: (b) => new Date(b.createdAt).toLocaleString(),
                  cellClass: () => 'nowrap',
                },
                { key: 'size', label: 'Size', cell: (b) => mib(b.size), cellClass: () => 'num' },
                { key: 'status', label: 'Status', cell: (b) => <Status b={b} /> },
              ]}
              actions={(b) => (
                <>
                  {b.status === 'ready' && (
                    <button
                      type="button"
                      aria-label={`Download ${b.name}`}
                      disabled={act.busy}
                      onClick={() => void download(b)}
                    >
                      Download
                    </button>
                  )}
                  {b.status !== 'running' && (
                    <button
                      type="button"
                      class="ghost danger"
                      aria-label={`Delete ${b.name}`}
                      disabled={act.busy}
                      onClick={() => remove(b)}
                    >
                      Delete
                    </button>
                  )}
                </>
              )}
            />
          </>
        )}
      </LoadState>
      {removing && (
        <ConfirmDialog
          title="Delete backup"
          confirmLabel="Delete"
          danger
          onClose={() => setRemoving(null)}
          onConfirm={() =>
            act.run(async () => {
              await api(`/api/admin/backups/${enc(removing.name)}`, { method: 'DELETE' });
              toast(`Deleted the backup ${removing.name}.`);
              setRemoving(null);
              reload();
            })
          }
        >
          This deletes the backup <strong>{removing.name}</strong> from the server; it cannot be undone.
        </ConfirmDialog>
      )}
    </section>
  );
}
