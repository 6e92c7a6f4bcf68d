// Operations pages over endpoints other work adds (logs, schedules, webhooks, migrations,
// advisor) and the backup endpoint: each shows "not available on this server" on a 404.
import { useEffect, useState } from 'preact/hooks';
import { api, request } from '../api';
import { Grid } from '../grid/grid';
import { SqlConfirm } from '../lib/confirm-sql';
import { ErrorBox, Modal, cellText, useAction, useLoad } from '../ui';
import { LoadState } from './notavailable';

type Rec = Record<string, unknown>;
const list = (d: unknown): Rec[] => (Array.isArray(d) ? d : ((d as { data?: Rec[] })?.data ?? (d as { items?: Rec[] })?.items ?? [])) as Rec[];

/** A grid of whatever objects an endpoint lists, columns from their keys. */
function AutoGrid({ label, rows, actions }: { label: string; rows: Rec[]; actions?: (r: Rec) => preact.ComponentChildren }) {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))].slice(0, 8);
  return <Grid<Rec> label={label} rows={rows} rowKey={(r, i) => String(r.id ?? i)} empty="Nothing yet." actions={actions} columns={keys.map((k) => ({ key: k, label: k, cell: (r) => cellText(r[k]) }))} />;
}

const SOURCES = ['http', 'database', 'functions', 'auth', 'realtime'];

export function Logs() {
  const [source, setSource] = useState('http');
  const [search, setSearch] = useState('');
  const [live, setLive] = useState(false);
  const { data, error, reload } = useLoad(() => api(`/api/logs/${source}?limit=100${search ? `&search=${encodeURIComponent(search)}` : ''}`), [source, search]);
  useEffect(() => {
    if (!live) return;
    const id = setInterval(() => document.visibilityState === 'visible' && reload(), 3000);
    return () => clearInterval(id);
  }, [live]);
  return (
    <section class="stack">
      <h1>Logs</h1>
      <form class="inline" role="search" onSubmit={(e) => (e.preventDefault(), setSearch(String(new FormData(e.currentTarget as HTMLFormElement).get('q') ?? '')))}>
        <label for="log-source">Source</label>
        <select id="log-source" value={source} onChange={(e) => setSource(e.currentTarget.value)}>
          {SOURCES.map((s) => <option key={s}>{s}</option>)}
        </select>
        <label for="log-q">Contains</label>
        <input id="log-q" name="q" type="search" />
        <button type="submit">Filter</button>
        <label class="check">
          <input type="checkbox" checked={live} onChange={(e) => setLive(e.currentTarget.checked)} /> Live tail
        </label>
      </form>
      <LoadState error={error} what="The logs explorer" endpoint={`GET /api/logs/${source}`}>
        {data !== null && <AutoGrid label="Log lines" rows={list(data)} />}
      </LoadState>
    </section>
  );
}

function Deliveries({ hook, onClose }: { hook: Rec; onClose: () => void }) {
  const path = `/api/database/webhooks/${encodeURIComponent(String(hook.id))}/deliveries`;
  const { data, error } = useLoad(() => api(path), [path]);
  return (
    <Modal title={`Deliveries of ${String(hook.name ?? hook.id)}`} onClose={onClose}>
      <LoadState error={error} what="The delivery log" endpoint={`GET ${path}`}>
        {data !== null && <AutoGrid label="Deliveries" rows={list(data)} />}
      </LoadState>
    </Modal>
  );
}

export function Webhooks() {
  const { data, error } = useLoad(() => api('/api/database/webhooks'), []);
  const [hook, setHook] = useState<Rec | null>(null);
  return (
    <section class="stack">
      <h1>Webhooks</h1>
      <LoadState error={error} what="Webhooks" endpoint="GET /api/database/webhooks">
        {data !== null && (
          <AutoGrid
            label="Webhooks"
            rows={list(data)}
            actions={(r) => (
              <button type="button" class="ghost" aria-label={`Deliveries of ${String(r.name ?? r.id)}`} onClick={() => setHook(r)}>
                Deliveries
              </button>
            )}
          />
        )}
      </LoadState>
      {hook && <Deliveries hook={hook} onClose={() => setHook(null)} />}
    </section>
  );
}

export function Migrations() {
  const { data, error } = useLoad(() => api('/api/database/migrations'), []);
  return (
    <section class="stack">
      <h1>Migrations</h1>
      <LoadState error={error} what="Migration history" endpoint="GET /api/database/migrations">
        {data !== null && <AutoGrid label="Migrations" rows={list(data)} />}
      </LoadState>
    </section>
  );
}

export function Advisor() {
  const { data, error, reload } = useLoad(() => api('/api/advisor/issues'), []);
  const [fix, setFix] = useState<string | null>(null);
  return (
    <section class="stack">
      <h1>Advisor</h1>
      <LoadState error={error} what="The advisor" endpoint="GET /api/advisor/issues">
        {data !== null && (
          <AutoGrid
            label="Findings"
            rows={list(data)}
            actions={(r) => (typeof r.fixSql === 'string' || typeof r.fix === 'string' ? <button type="button" onClick={() => setFix(String(r.fixSql ?? r.fix))}>Fix</button> : null)}
          />
        )}
      </LoadState>
      {fix && <SqlConfirm title="Apply the fix" sql={fix} onClose={() => setFix(null)} onDone={() => (setFix(null), reload())} />}
    </section>
  );
}

export function Backups() {
  const act = useAction();
  const [done, setDone] = useState('');
  const backup = () =>
    act.run(async () => {
      const r = await request('/api/admin/backup', { method: 'POST' });
      const blob = await r.blob();
      const name = /filename="?([^";]+)/.exec(r.headers.get('content-disposition') ?? '')?.[1] ?? `plinth-backup-${new Date().toISOString().slice(0, 19).replace(/:/g, '')}.tar.gz`;
      const a = document.createElement('a');
      a.href = URL.createObjectURL(blob);
      a.download = name;
      document.body.append(a);
      a.click();
      a.remove();
      setDone(`${name} downloaded (${(blob.size / 1048576).toFixed(1)} MiB). Restore it with "npm run plinth -- restore ${name}".`);
    });
  return (
    <section class="stack">
      <h1>Backups</h1>
      <p class="muted">A backup of the running server: the embedded database and local storage as one .tar.gz, downloaded to this computer.</p>
      <div class="actions">
        <button type="button" class="primary" disabled={act.busy} onClick={() => void backup()}>
          {act.busy ? 'Backing up…' : 'Create and download a backup'}
        </button>
      </div>
      <ErrorBox error={act.error} />
      {done && <p role="status">{done}</p>}
    </section>
  );
}
