import { useState } from 'preact/hooks';
import { api, enc, encKey } from '../api';
import { link } from '../router';
import { Grid, SpanRow } from '../grid/grid';
import { download, FolderIcon, Preview, type StoredObject, size, Thumb, Uploader } from './objects';
import { Download, FileText, Link, Trash2 } from '../components/icons';
import { Button, ConfirmDialog, CopyButton, EmptyState, ErrorBox, Pager, toast, useAction, useLoad } from '../ui';

const LIMIT = 100;

interface FilesProps {
  bucket: string;
  prefix: string;
  folders: string[];
  files: StoredObject[];
  listed: number;
  open: (p: string) => void;
  onPreview: (o: StoredObject) => void;
  act: ReturnType<typeof useAction>;
  sign: (key: string) => unknown;
  onDelete: (key: string) => void;
}

/** The folders and files of one prefix in the grid, and what the count below them counts. */
function Files({
  bucket,
  prefix,
  folders,
  files,
  listed,
  open,
  onPreview: setPreviewing,
  act,
  sign,
  onDelete,
}: FilesProps) {
  return (
    <>
      <Grid
        label="Files"
        rows={files}
        rowKey={(o) => o.key}
        empty={
          folders.length ? undefined : (
            <EmptyState icon={FileText} title="No files here yet">
              Drop files on the box above, or choose them with its button. Images get previews.
            </EmptyState>
          )
        }
        before={folders.map((f) => (
          <SpanRow key={f} span={5}>
            <button type="button" class="link" aria-label={`Open folder ${f}`} onClick={() => open(prefix + f)}>
              <FolderIcon /> {f}
            </button>
          </SpanRow>
        ))}
        columns={[
          {
            key: 'name',
            label: 'Name',
            cell: (o) => (
              <>
                <Thumb bucket={bucket} o={o} />{' '}
                <button type="button" class="link" title="Preview" onClick={() => setPreviewing(o)}>
                  {o.key.slice(prefix.length)}
                </button>
              </>
            ),
          },
          { key: 'size', label: 'Size', cell: (o) => size(o.size), cellClass: () => 'num' },
          { key: 'type', label: 'Type', cell: (o) => o.mimeType },
          { key: 'uploaded', label: 'Uploaded', cell: (o) => new Date(o.uploadedAt).toLocaleString() },
        ]}
        actions={(o) => (
          <>
            <Button
              variant="ghost"
              size="sm"
              icon={Download}
              aria-label={`Download ${o.key}`}
              onClick={() => void act.run(() => download(bucket, o.key))}
            >
              Download
            </Button>
            <Button
              variant="ghost"
              size="sm"
              icon={Link}
              aria-label={`Signed link to ${o.key}`}
              onClick={() => void sign(o.key)}
            >
              Link
            </Button>
            <Button
              variant="ghost danger"
              size="sm"
              icon={Trash2}
              aria-label={`Delete ${o.key}`}
              onClick={() => onDelete(o.key)}
            >
              Delete
            </Button>
          </>
        )}
      />
      {(folders.length > 0 || files.length !== listed) && (
        <p class="muted">
          Shown as {folders.length} folder{folders.length === 1 ? '' : 's'} and {files.length} file
          {files.length === 1 ? '' : 's'}; the count below is of objects (a folder holds one or more).
        </p>
      )}
    </>
  );
}

/** One bucket: folders from "/" in keys, upload, download, delete, signed links. */
export function Bucket({ bucket }: { bucket: string }) {
  const [prefix, setPrefix] = useState('');
  const [offset, setOffset] = useState(0);
  const [signed, setSigned] = useState<{ key: string; url: string } | null>(null);
  const [previewing, setPreviewing] = useState<StoredObject | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const act = useAction();
  const { data, error, reload } = useLoad(
    () =>
      api<{ data: StoredObject[]; pagination: { total: number } }>(
        `/api/storage/buckets/${enc(bucket)}/objects?limit=${LIMIT}&offset=${offset}&prefix=${enc(prefix)}`,
      ),
    [bucket, prefix, offset],
  );
  const folders = [
    ...new Set(
      (data?.data ?? [])
        .map((o) => o.key.slice(prefix.length))
        .filter((k) => k.includes('/'))
        .map((k) => k.slice(0, k.indexOf('/') + 1)),
    ),
  ];
  const files = (data?.data ?? []).filter((o) => !o.key.slice(prefix.length).includes('/'));
  const open = (p: string) => (setPrefix(p), setOffset(0));
  const sign = (key: string) =>
    act.run(async () => {
      const r = await api<{ url: string }>(
        `/api/storage/buckets/${enc(bucket)}/objects/${encKey(key)}/download-strategy`,
        { method: 'POST', body: { expiresIn: 3600 } },
      );
      setSigned({ key, url: new URL(r.url, location.origin).toString() });
    });
  const parts = prefix.split('/').filter(Boolean);
  return (
    <section class="stack">
      <header class="page-head">
        <div class="titles">
          <p class="crumbs">
            <a {...link('/storage')}>Storage</a> /{' '}
            <button type="button" class="link" onClick={() => open('')}>
              {bucket}
            </button>
            {parts.map((p, i) => (
              <span key={i}>
                {' / '}
                <button type="button" class="link" onClick={() => open(`${parts.slice(0, i + 1).join('/')}/`)}>
                  {p}
                </button>
              </span>
            ))}
          </p>
          <h1>{bucket}</h1>
        </div>
      </header>
      <Uploader bucket={bucket} prefix={prefix} onDone={reload} />
      <form
        class="inline"
        aria-label="Open a folder"
        onSubmit={(e) => {
          e.preventDefault();
          const input = (e.currentTarget as HTMLFormElement).elements.namedItem('folder') as HTMLInputElement;
          const name = input.value.replace(/^\/+|\/+$/g, '');
          if (name) open(`${prefix}${name}/`);
          input.value = '';
        }}
      >
        <label for="folder">Folder</label>
        <input id="folder" name="folder" placeholder="name (uploads create it)" />
        <button type="submit">Open folder</button>
      </form>
      <ErrorBox error={error ?? act.error} />
      {signed && (
        <p role="status" class="row">
          Link to {signed.key} (1 hour): <code class="url">{signed.url}</code>{' '}
          <CopyButton text={signed.url} label="Copy link" />
        </p>
      )}
      <Files
        bucket={bucket}
        prefix={prefix}
        folders={folders}
        files={files}
        listed={data?.data.length ?? 0}
        open={open}
        onPreview={setPreviewing}
        act={act}
        sign={sign}
        onDelete={setDeleting}
      />
      {previewing && <Preview bucket={bucket} obj={previewing} onClose={() => setPreviewing(null)} />}
      {deleting && (
        <ConfirmDialog
          title="Delete file"
          confirmLabel="Delete"
          danger
          onClose={() => setDeleting(null)}
          onConfirm={() =>
            act.run(async () => {
              await api(`/api/storage/buckets/${enc(bucket)}/objects/${encKey(deleting)}`, { method: 'DELETE' });
              toast(`Deleted ${deleting}.`);
              setDeleting(null);
              reload();
            })
          }
        >
          This deletes <strong>{deleting}</strong> from {bucket}; it cannot be undone.
        </ConfirmDialog>
      )}
      {data && (
        <Pager offset={offset} limit={LIMIT} total={data.pagination.total} onOffset={setOffset} noun="objects" />
      )}
    </section>
  );
}
