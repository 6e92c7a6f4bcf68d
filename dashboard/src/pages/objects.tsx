// A bucket's objects moving in and out: upload with progress (one file after another), download,
// a thumbnail of an image (a rendition the server makes), a preview of an image or a text file.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, enc, encKey, request, session } from '../api';
import { Icon, Upload } from '../components/icons';
import { ErrorBox, Modal, toast, useAction, useLoad } from '../ui';

export interface StoredObject {
  key: string;
  size: number;
  mimeType: string;
  uploadedAt: string;
}

export function size(n: number): string {
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
      reject(
        new ApiError(
          xhr.status,
          env.error ?? 'UPLOAD_FAILED',
          env.message ?? `Upload failed (${xhr.status}).`,
          env.nextActions ?? '',
        ),
      );
    };
    xhr.onerror = () =>
      reject(new ApiError(0, 'NETWORK', 'The upload did not reach the server.', 'Check the connection and try again.'));
    xhr.send(form);
  });
}

export async function download(bucket: string, key: string) {
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
export function Thumb({ bucket, o }: { bucket: string; o: StoredObject }) {
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

export const FolderIcon = () => (
  <svg class="icon" viewBox="0 0 24 24" aria-hidden="true">
    <path d="M3 6.5A2.5 2.5 0 0 1 5.5 4h4l2 2h7A2.5 2.5 0 0 1 21 8.5v9a2.5 2.5 0 0 1-2.5 2.5h-13A2.5 2.5 0 0 1 3 17.5z" />
  </svg>
);

/** Shows an image or the start of a text file (fetched with the admin key). */
export function Preview({ bucket, obj, onClose }: { bucket: string; obj: StoredObject; onClose: () => void }) {
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
        {data?.text !== undefined && (
          <pre tabIndex={0} aria-label="File contents">
            {data.text}
          </pre>
        )}
        {data?.none && <p class="muted">No preview for {obj.mimeType}: download it instead.</p>}
      </div>
    </Modal>
  );
}

export function Uploader({ bucket, prefix, onDone }: { bucket: string; prefix: string; onDone: () => void }) {
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
      toast(`Uploaded ${list.length === 1 ? list[0]!.name : `${list.length} files`} to ${bucket}.`);
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
      <Icon icon={Upload} />
      <label for="upload">Upload files to {prefix || 'the bucket root'} (or drop them here)</label>
      <input id="upload" type="file" multiple onChange={(e) => void send(e.currentTarget.files)} />
      {progress !== null && <progress aria-label="Upload progress" max={1} value={progress} />}
      {current && <span role="status">{current}</span>}
      <ErrorBox error={act.error} />
    </div>
  );
}
