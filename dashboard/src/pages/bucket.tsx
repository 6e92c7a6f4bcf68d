import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, enc, encKey, request, session } from '../api';
import { link } from '../router';
import { CopyButton, ErrorBox, Pager, useAction, useLoad } from '../ui';

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

function Uploader({ bucket, prefix, onDone }: { bucket: string; prefix: string; onDone: () => void }) {
  const [progress, setProgress] = useState<number | null>(null);
  const [over, setOver] = useState(false);
  const act = useAction();
  const send = async (files: FileList | null) => {
    if (!files?.length) return;
    await act.run(async () => {
      for (const f of Array.from(files)) {
        setProgress(0);
        await upload(bucket, prefix + f.name, f, setProgress);
      }
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
      <ErrorBox error={act.error} />
    </div>
  );
}

/** One bucket: folders from "/" in keys, upload, download, delete, signed links. */
export function Bucket({ bucket }: { bucket: string }) {
  const [prefix, setPrefix] = useState('');
  const [offset, setOffset] = useState(0);
  const [signed, setSigned] = useState<{ key: string; url: string } | null>(null);
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
      <div class="grid-wrap" tabIndex={0}>
        <table class="grid" aria-label="Files">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Size</th>
              <th scope="col">Type</th>
              <th scope="col">Uploaded</th>
              <th scope="col"><span class="sr-only">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {folders.map((f) => (
              <tr key={f}>
                <td colSpan={5}>
                  <button type="button" class="link" onClick={() => open(prefix + f)}>📁 {f}</button>
                </td>
              </tr>
            ))}
            {files.map((o) => (
              <tr key={o.key}>
                <td>
                  <Thumb bucket={bucket} o={o} /> {o.key.slice(prefix.length)}
                </td>
                <td>{size(o.size)}</td>
                <td>{o.mimeType}</td>
                <td>{new Date(o.uploadedAt).toLocaleString()}</td>
                <td class="actions">
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
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {data && <Pager offset={offset} limit={LIMIT} total={data.pagination.total} onOffset={setOffset} />}
    </section>
  );
}
