import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { FolderOpen, HardDrive, Icon, Plus, Trash2 } from '../components/icons';
import { link, navigate, useSearch } from '../router';
import { Badge, Button, Confirm, EmptyState, ErrorBox, Modal, PageHeader, toast, useAction, useLoad } from '../ui';
import { Bucket } from './bucket';
import { Grid } from '../grid/grid';
import { runSql } from '../lib/sql';
import { bytes } from './tables';

interface BucketInfo {
  bucket: string;
  isPublic: boolean;
}

async function loadBuckets(): Promise<BucketInfo[]> {
  const { buckets } = await api<{ buckets: string[] }>('/api/storage/buckets');
  return Promise.all(buckets.map((b) => api<BucketInfo>(`/api/storage/buckets/${enc(b)}`)));
}

function CreateBucket({ onClose, onDone }: { onClose: () => void; onDone: () => void }) {
  const act = useAction();
  return (
    <Modal title="New bucket" onClose={onClose}>
      <form
        class="stack"
        onSubmit={async (e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget as HTMLFormElement);
          const body = { bucketName: String(f.get('name')), isPublic: f.get('public') === 'on' };
          if (await act.run(() => api('/api/storage/buckets', { method: 'POST', body }))) {
            toast(`Created the bucket ${body.bucketName}.`);
            onDone();
          }
        }}
      >
        <label for="bucket-name">Bucket name</label>
        <input id="bucket-name" name="name" required pattern="[A-Za-z0-9_\-]+" />
        <label class="check">
          <input type="checkbox" name="public" defaultChecked /> Public (anyone with the URL can download)
        </label>
        <ErrorBox error={act.error} />
        <div class="footer">
          <button type="button" class="ghost" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={act.busy}>
            Create bucket
          </button>
        </div>
      </form>
    </Modal>
  );
}

function Buckets() {
  const { data, error, reload, loading } = useLoad(loadBuckets, []);
  const sizes = useLoad(async () => {
    const r = await runSql<{ bucket: string; objects: string; bytes: string }>(
      'select bucket, count(*)::bigint as objects, coalesce(sum(size), 0)::bigint as bytes from storage.objects group by bucket',
    );
    return Object.fromEntries(r.rows.map((x) => [x.bucket, { objects: Number(x.objects), bytes: Number(x.bytes) }]));
  }, [data]);
  const creating = useSearch().get('new') === '1';
  const setCreating = (on: boolean) => navigate(on ? '/storage?new=1' : '/storage', { replace: !on });
  const [deleting, setDeleting] = useState<string | null>(null);
  const act = useAction();
  const toggle = (b: BucketInfo) =>
    act.run(() =>
      api(`/api/storage/buckets/${enc(b.bucket)}`, { method: 'PATCH', body: { isPublic: !b.isPublic } }).then(() => {
        toast(`${b.bucket} is now ${b.isPublic ? 'private' : 'public'}.`);
        reload();
      }),
    );
  return (
    <section class="stack">
      <PageHeader
        title="Storage"
        description="Buckets of files: public ones anyone with the URL can download, private ones only through signed links or with a key."
        actions={
          <Button variant="primary" icon={Plus} onClick={() => setCreating(true)}>
            New bucket
          </Button>
        }
      />
      <ErrorBox error={error ?? act.error} />
      <Grid
        label="Buckets"
        rows={data ?? []}
        loading={loading}
        rowKey={(b) => b.bucket}
        empty={
          <EmptyState
            icon={HardDrive}
            title="No buckets yet"
            action={
              <Button variant="primary" icon={Plus} onClick={() => setCreating(true)}>
                Create a bucket
              </Button>
            }
          >
            A bucket holds files: avatars, uploads, exports. Create one, then drop files into it.
          </EmptyState>
        }
        columns={[
          {
            key: 'name',
            label: 'Bucket',
            cell: (b) => (
              <a {...link(`/storage/${enc(b.bucket)}`)} class="row">
                <Icon icon={FolderOpen} /> {b.bucket}
              </a>
            ),
          },
          {
            key: 'access',
            label: 'Access',
            cell: (b) => <Badge tone={b.isPublic ? 'success' : 'warning'}>{b.isPublic ? 'public' : 'private'}</Badge>,
          },
          {
            key: 'objects',
            label: 'Objects',
            cell: (b) => String(sizes.data?.[b.bucket]?.objects ?? 0),
            cellClass: () => 'num',
          },
          {
            key: 'size',
            label: 'Size',
            cell: (b) => bytes(sizes.data?.[b.bucket]?.bytes ?? 0),
            cellClass: () => 'num',
          },
        ]}
        actions={(b) => (
          <>
            <button
              type="button"
              class="ghost"
              aria-label={`Make ${b.isPublic ? 'private' : 'public'} (${b.bucket})`}
              onClick={() => void toggle(b)}
            >
              Make {b.isPublic ? 'private' : 'public'}
            </button>
            <Button
              variant="ghost danger"
              size="sm"
              icon={Trash2}
              aria-label={`Delete bucket ${b.bucket}`}
              onClick={() => setDeleting(b.bucket)}
            >
              Delete
            </Button>
          </>
        )}
      />
      {creating && <CreateBucket onClose={() => setCreating(false)} onDone={() => (setCreating(false), reload())} />}
      {deleting && (
        <Confirm
          what="bucket"
          name={deleting}
          onClose={() => setDeleting(null)}
          onConfirm={() => api(`/api/storage/buckets/${enc(deleting)}`, { method: 'DELETE' }).then(reload)}
        />
      )}
    </section>
  );
}

/** /storage lists buckets; /storage/<bucket> browses one. */
export function Storage({ params }: { params: string[] }) {
  return params[0] ? <Bucket bucket={params[0]} /> : <Buckets />;
}
