import { useState } from 'preact/hooks';
import { ApiError, api, enc } from '../api';
import { Grid } from '../grid/grid';
import { Confirm, ErrorBox, Modal, Pager, useAction, useLoad } from '../ui';
import { UserPanel } from './user-panel';

interface User {
  id: string;
  email: string;
  emailVerified: boolean;
  createdAt?: string;
  profile?: { name?: string };
}

const LIMIT = 25;

/** Creates a user with the admin key: POST /api/auth/users, else sign-up on servers without it. */
async function createUser({ emailVerified, ...body }: { email: string; password: string; name: string; emailVerified: boolean }) {
  try {
    return await api('/api/auth/users', { method: 'POST', body: { ...body, emailVerified } });
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 404 || e.code !== 'ROUTE_NOT_FOUND') throw e;
    return api('/api/auth/signup', { method: 'POST', body });
  }
}

function CreateUser({ onClose, onDone }: { onClose: () => void; onDone: () => void }) {
  const act = useAction();
  return (
    <Modal title="New user" onClose={onClose}>
      <form
        class="stack"
        onSubmit={async (e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget as HTMLFormElement);
          const body = { email: String(f.get('email')), password: String(f.get('password')), name: String(f.get('name') ?? ''), emailVerified: f.get('verified') === 'on' };
          if (await act.run(() => createUser(body))) onDone();
        }}
      >
        <label for="u-email">Email</label>
        <input id="u-email" name="email" type="email" required autocomplete="off" />
        <label for="u-password">Password</label>
        <input id="u-password" name="password" type="password" required autocomplete="new-password" />
        <label for="u-name">Name</label>
        <input id="u-name" name="name" autocomplete="off" />
        <label class="check">
          <input type="checkbox" name="verified" defaultChecked /> Email address already verified
        </label>
        <ErrorBox error={act.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={act.busy}>
            Create user
          </button>
        </div>
      </form>
    </Modal>
  );
}

/** Users: search, page, create, delete, end sessions, verified state. */
export function Users() {
  const [search, setSearch] = useState('');
  const [offset, setOffset] = useState(0);
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<User | null>(null);
  const [notice, setNotice] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  const act = useAction();
  const { data, error, reload } = useLoad(
    () => api<{ data: User[]; pagination: { total: number } }>(`/api/auth/users?limit=${LIMIT}&offset=${offset}${search ? `&search=${enc(search)}` : ''}`),
    [search, offset],
  );
  return (
    <section class="stack">
      <div class="row">
        <h1>Users</h1>
        <button type="button" class="primary" onClick={() => setCreating(true)}>
          New user
        </button>
      </div>
      <form role="search" class="inline" onSubmit={(e) => (e.preventDefault(), setOffset(0), setSearch(String(new FormData(e.currentTarget as HTMLFormElement).get('q'))))}>
        <label for="user-search">Search by email</label>
        <input id="user-search" name="q" type="search" />
        <button type="submit">Search</button>
      </form>
      <ErrorBox error={error ?? act.error} />
      {notice && <p role="status">{notice}</p>}
      <Grid
        label="Users"
        rows={data?.data ?? []}
        rowKey={(u) => u.id}
        empty="No users."
        columns={[
          { key: 'email', label: 'Email', cell: (u) => u.email },
          { key: 'verified', label: 'Verified', cell: (u) => (u.emailVerified ? '✓ verified' : 'not verified') },
          { key: 'name', label: 'Name', cell: (u) => u.profile?.name ?? '' },
          { key: 'id', label: 'Id', cell: (u) => <code>{u.id}</code> },
        ]}
        actions={(u) => (
          <>
            <button type="button" class="ghost" aria-label={`Open ${u.email}`} onClick={() => setOpen(u.id)}>
              Open
            </button>
            <button
              type="button"
              class="ghost"
              aria-label={`End sessions of ${u.email}`}
              onClick={() => void act.run(async () => setNotice((await api<{ message: string }>(`/api/auth/users/${u.id}/sessions`, { method: 'DELETE' })).message))}
            >
              End sessions
            </button>
            <button type="button" class="ghost danger" aria-label={`Delete ${u.email}`} onClick={() => setDeleting(u)}>
              Delete
            </button>
          </>
        )}
      />
      {data && <Pager offset={offset} limit={LIMIT} total={data.pagination.total} onOffset={setOffset} />}
      {open && <UserPanel userId={open} onClose={() => setOpen(null)} onChanged={reload} />}
      {creating && <CreateUser onClose={() => setCreating(false)} onDone={() => (setCreating(false), reload())} />}
      {deleting && <Confirm what="user" name={deleting.email} onClose={() => setDeleting(null)} onConfirm={() => api(`/api/auth/users/${deleting.id}`, { method: 'DELETE' }).then(reload)} />}
    </section>
  );
}
