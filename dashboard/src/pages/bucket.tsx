import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, enc, encKey, request, session } from '../api';
import { link } from '../router';
import { Grid, SpanRow } from '../grid/grid';
import { CopyButton, ErrorBox, Modal, Pager, useAction, useLoad } from '../ui';

interface StoredObject {
  key: string;
  size: number;
  mimeType: string;
  uploadedAt: string;
}

const LIMIT = 100;

function size(n: number): string {
  return n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1048576).toFixed(1)} MiB`;
}

/** Uploads with XMLHttpRequest, the one browser API that reports upload progress. */
function upload(bucket: string, key: string, file: File, onProgress: (f: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const form = new FormData();
    form.append('path', key); // before the file: the server reads fields in order
    form.append('file', file);
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `/api/storage/buckets/${enc(bucket)}/objects`);
    xhr.setRequestHeader('x-api-key', session.key() ?? '');
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      if (xhr.status < 300) return resolve();
      let env: Record<string, string> = {};
      try {
        env = JSON.parse(xhr.responseText);
      } catch {
        /* not an envelope */
      }
      reject(new ApiError(xhr.status, env.error ?? 'UPLOAD_FAILED', env.message ?? `Upload failed (${xhr.status}).`, env.nextActions ?? ''));
    };
    xhr.onerror = () => reject(new ApiError(0, 'NETWORK', 'The upload did not reach the server.', 'Check the connection and try again.'));
    xhr.send(form);
  });
}

async function download(bucket: string, key: string) {
  const r = await request(`/api/storage/buckets/${enc(bucket)}/objects/${encKey(key)}`);
  const url = URL.createObjectURL(await r.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = key.split('/').pop() ?? 'download';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/avif', 'image/gif', 'image/tiff']);

/**
 * A 48 px preview of an image object: a rendition the server makes (`?width&height&format`),
 * fetched with the admin key (an <img src> cannot send it) and shown from a blob: URL.
 */
function Thumb({ bucket, o }: { bucket: string; o: StoredObject }) {
  const [src, setSrc] = useState<string | null>(null);
  useEffect(() => {
    if (!IMAGE_TYPES.has(o.mimeType)) return;
    let url: string | null = null;
    let live = true;
    request(`/api/storage/buckets/${enc(bucket)}/objects/${encKey(o.key)}?width=96&height=96&resize=cover&format=webp`)
      .then((r) => r.blob())
      .then((b) => {
        url = URL.createObjectURL(b);
        if (live) setSrc(url);
      })
      .catch(() => {}); // no preview (too large, not decodable): the row stays as it is
    return () => {
      live = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [bucket, o.key, o.uploadedAt]);
  return src ? <img class="thumb" src={src} width={48} height={48} alt={`Preview of ${o.key}`} /> : null;
}

const FolderIcon = () => (
  <svg class="icon" viewBox="0 0 24 24" aria-hidden="true">
    <path d="M3 6.5A2.5 2.5 0 0 1 5.5 4h4l2 2h7A2.5 2.5 0 0 1 21 8.5v9a2.5 2.5 0 0 1-2.5 2.5h-13A2.5 2.5 0 0 1 3 17.5z" />
  </svg>
);

/** Shows an image or the start of a text file (fetched with the admin key). */
function Preview({ bucket, obj, onClose }: { bucket: string; obj: StoredObject; onClose: () => void }) {
  const { data, error } = useLoad(async () => {
    const r = await request(`/api/storage/buckets/${enc(bucket)}/objects/${encKey(obj.key)}`);
    const blob = await r.blob();
    if (obj.mimeType.startsWith('image/')) return { img: URL.createObjectURL(blob) };
    if (/^text\/|json|xml|csv|javascript/.test(obj.mimeType)) return { text: await blob.slice(0, 65536).text() };
    return { none: true };
  }, [obj.key]);
  return (
    <Modal title={`Preview of ${obj.key}`} onClose={onClose}>
      <ErrorBox error={error} />
      <div class="preview">
        {data?.img && <img src={data.img} alt={obj.key} />}
        {data?.text !== undefined && <pre tabIndex={0} aria-label="File contents">{data.text}</pre>}
        {data?.none && <p class="muted">No preview for {obj.mimeType}: download it instead.</p>}
      </div>
    </Modal>
  );
}

function Uploader({ bucket, prefix, onDone }: { bucket: string; prefix: string; onDone: () => void }) {
  const [progress, setProgress] = useState<number | null>(null);
  const [current, setCurrent] = useState('');
  const [over, setOver] = useState(false);
  const act = useAction();
  const send = async (files: FileList | null) => {
    if (!files?.length) return;
    await act.run(async () => {
      const list = Array.from(files);
      for (const [i, f] of list.entries()) {
        setProgress(0);
        setCurrent(`Uploading ${i + 1} of ${list.length}: ${f.name}`);
        await upload(bucket, prefix + f.name, f, setProgress);
      }
      setCurrent(`${list.length} file(s) uploaded.`);
    });
    setProgress(null);
    onDone();
  };
  return (
    <div
      class={over ? 'drop over' : 'drop'}
      onDragOver={(e) => (e.preventDefault(), setOver(true))}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => (e.preventDefault(), setOver(false), void send(e.dataTransfer?.files ?? null))}
    >
      <label for="upload">Upload files to {prefix || 'the bucket root'} (or drop them here)</label>
      <input id="upload" type="file" multiple onChange={(e) => void send(e.currentTarget.files)} />
      {progress !== null && <progress aria-label="Upload progress" max={1} value={progress} />}
      {current && <span role="status">{current}</span>}
      <ErrorBox error={act.error} />
    </div>
  );
}

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
  reload: () => void;
}

/** The folders and files of one prefix in the grid, and what the count below them counts. */
function Files({ bucket, prefix, folders, files, listed, open, onPreview: setPreviewing, act, sign, reload }: FilesProps) {
  return (
    <>
      <Grid
        label="Files"
        rows={files}
        rowKey={(o) => o.key}
        empty={folders.length ? undefined : 'No files here yet.'}
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
                <button type="button" class="link" title="Preview" onClick={() => setPreviewing(o)}>{o.key.slice(prefix.length)}</button>
              </>
            ),
          },
          { key: 'size', label: 'Size', cell: (o) => size(o.size), cellClass: () => 'num' },
          { key: 'type', label: 'Type', cell: (o) => o.mimeType },
          { key: 'uploaded', label: 'Uploaded', cell: (o) => new Date(o.uploadedAt).toLocaleString() },
        ]}
        actions={(o) => (
          <>
            <button type="button" class="ghost" aria-label={`Download ${o.key}`} onClick={() => void act.run(() => download(bucket, o.key))}>Download</button>
            <button type="button" class="ghost" aria-label={`Signed link to ${o.key}`} onClick={() => void sign(o.key)}>Link</button>
            <button
              type="button"
              class="ghost danger"
              aria-label={`Delete ${o.key}`}
              onClick={() => confirm(`Delete ${o.key}?`) && void act.run(() => api(`/api/storage/buckets/${enc(bucket)}/objects/${encKey(o.key)}`, { method: 'DELETE' }).then(reload))}
            >
              Delete
            </button>
          </>
        )}
      />
      {(folders.length > 0 || files.length !== listed) && (
        <p class="muted">
          Shown as {folders.length} folder{folders.length === 1 ? '' : 's'} and {files.length} file{files.length === 1 ? '' : 's'}; the count below is of objects (a folder holds one or more).
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
  const act = useAction();
  const { data, error, reload } = useLoad(
    () => api<{ data: StoredObject[]; pagination: { total: number } }>(`/api/storage/buckets/${enc(bucket)}/objects?limit=${LIMIT}&offset=${offset}&prefix=${enc(prefix)}`),
    [bucket, prefix, offset],
  );
  const folders = [...new Set((data?.data ?? []).map((o) => o.key.slice(prefix.length)).filter((k) => k.includes('/')).map((k) => k.slice(0, k.indexOf('/') + 1)))];
  const files = (data?.data ?? []).filter((o) => !o.key.slice(prefix.length).includes('/'));
  const open = (p: string) => (setPrefix(p), setOffset(0));
  const sign = (key: string) =>
    act.run(async () => {
      const r = await api<{ url: string }>(`/api/storage/buckets/${enc(bucket)}/objects/${encKey(key)}/download-strategy`, { method: 'POST', body: { expiresIn: 3600 } });
      setSigned({ key, url: new URL(r.url, location.origin).toString() });
    });
  const parts = prefix.split('/').filter(Boolean);
  return (
    <section class="stack">
      <p class="crumbs">
        <a {...link('/storage')}>Storage</a> / <button type="button" class="link" onClick={() => open('')}>{bucket}</button>
        {parts.map((p, i) => (
          <span key={i}>
            {' / '}
            <button type="button" class="link" onClick={() => open(parts.slice(0, i + 1).join('/') + '/')}>{p}</button>
          </span>
        ))}
      </p>
      <h1>{bucket}</h1>
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
          Link to {signed.key} (1 hour): <code class="url">{signed.url}</code> <CopyButton text={signed.url} label="Copy link" />
        </p>
      )}
      <Files bucket={bucket} prefix={prefix} folders={folders} files={files} listed={data?.data.length ?? 0} open={open} onPreview={setPreviewing} act={act} sign={sign} reload={reload} />
      {previewing && <Preview bucket={bucket} obj={previewing} onClose={() => setPreviewing(null)} />}
      {data && <Pager offset={offset} limit={LIMIT} total={data.pagination.total} onOffset={setOffset} noun="objects" />}
    </section>
  );
}
