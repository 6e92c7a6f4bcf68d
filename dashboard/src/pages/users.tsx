import { useState } from 'preact/hooks';
import { ApiError, api, enc } from '../api';
import { Trash2, UserPlus, Users as UsersIcon } from '../components/icons';
import { Grid } from '../grid/grid';
import { navigate, useSearch } from '../router';
import {
  Badge,
  Button,
  Card,
  Confirm,
  EmptyState,
  ErrorBox,
  Modal,
  PageHeader,
  Pager,
  toast,
  useAction,
  useLoad,
} from '../ui';
import { UserPanel } from './user-panel';

interface User {
  id: string;
  email: string;
  emailVerified: boolean;
  createdAt?: string;
  profile?: { name?: string };
  isAnonymous?: boolean;
  factors?: { id: string; type: string; status: string; friendlyName: string | null }[];
  bannedUntil?: string | null;
}

/** How a user is named in the table and in button labels: anonymous users have no email. */
const label = (u: User) => (u.isAnonymous ? `anonymous user ${u.id.slice(0, 8)}` : u.email);

/** The user's MFA state: its verified factors, or that enrolment is unfinished. */
function mfaOf(u: User): string {
  const verified = (u.factors ?? []).filter((f) => f.status === 'verified');
  if (verified.length) return `TOTP on (${verified.length})`;
  return (u.factors ?? []).length ? 'enrolling' : 'off';
}

/** Deletes anonymous users older than N days (DELETE /api/auth/users/anonymous). */
function AnonymousCleanup({ onDone }: { onDone: (message: string) => void }) {
  const act = useAction();
  return (
    <form
      class="inline"
      aria-label="Delete old anonymous users"
      onSubmit={async (e) => {
        e.preventDefault();
        const days = Number(new FormData(e.currentTarget as HTMLFormElement).get('days'));
        await act.run(async () =>
          onDone(
            (await api<{ message: string }>(`/api/auth/users/anonymous?olderThanDays=${days}`, { method: 'DELETE' }))
              .message,
          ),
        );
      }}
    >
      <label for="anon-days">Anonymous users older than (days)</label>
      <input id="anon-days" name="days" type="number" min={0} max={36500} defaultValue="30" required />
      <Button type="submit" variant="danger" size="sm" icon={Trash2} disabled={act.busy}>
        Delete them
      </Button>
      <ErrorBox error={act.error} />
    </form>
  );
}

/** A user's actions: reset MFA (when enrolled), open the panel, end sessions, delete. */
function UserActions({
  u,
  act,
  onNotice,
  onOpen,
  onDelete,
}: {
  u: User;
  act: ReturnType<typeof useAction>;
  onNotice: (m: string) => void;
  onOpen: () => void;
  onDelete: () => void;
}) {
  const name = label(u);
  const message = async (path: string) =>
    onNotice((await api<{ message: string }>(path, { method: 'DELETE' })).message);
  return (
    <>
      {(u.factors ?? []).length > 0 && (
        <button
          type="button"
          class="ghost"
          aria-label={`Reset MFA of ${name}`}
          onClick={() => void act.run(() => message(`/api/auth/users/${u.id}/factors`))}
        >
          Reset MFA
        </button>
      )}
      <button type="button" class="sm" aria-label={`Open ${name}`} onClick={onOpen}>
        Open
      </button>
      <button
        type="button"
        class="ghost"
        aria-label={`End sessions of ${name}`}
        onClick={() => void act.run(() => message(`/api/auth/users/${u.id}/sessions`))}
      >
        End sessions
      </button>
      <button type="button" class="ghost danger" aria-label={`Delete ${name}`} onClick={onDelete}>
        Delete
      </button>
    </>
  );
}

const LIMIT = 25;

/** Creates a user with the admin key: POST /api/auth/users, else sign-up on servers without it. */
async function createUser({
  emailVerified,
  ...body
}: {
  email: string;
  password: string;
  name: string;
  emailVerified: boolean;
}) {
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
          const body = {
            email: String(f.get('email')),
            password: String(f.get('password')),
            name: String(f.get('name') ?? ''),
            emailVerified: f.get('verified') === 'on',
          };
          if (await act.run(() => createUser(body))) {
            toast(`Created the user ${body.email}.`);
            onDone();
          }
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
        <div class="footer">
          <button type="button" class="ghost" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={act.busy}>
            Create user
          </button>
        </div>
      </form>
    </Modal>
  );
}

/** Users: search, page, create, delete, end sessions, verified state, bans, MFA (reset), anonymous users (cleanup).
 * ?new=1 opens "New user", ?open=<id> a user's panel (the command palette links there). */
export function Users() {
  const [search, setSearch] = useState('');
  const [offset, setOffset] = useState(0);
  const [deleting, setDeleting] = useState<User | null>(null);
  const query = useSearch();
  const creating = query.get('new') === '1';
  const open = query.get('open');
  const setQuery = (q: string | null) => navigate(q ? `/users?${q}` : '/users', { replace: !q });
  const act = useAction();
  const { data, error, reload, loading } = useLoad(
    () =>
      api<{ data: User[]; pagination: { total: number } }>(
        `/api/auth/users?limit=${LIMIT}&offset=${offset}${search ? `&search=${enc(search)}` : ''}`,
      ),
    [search, offset],
  );
  const notice = (m: string) => (toast(m), reload());
  return (
    <section class="stack">
      <PageHeader
        title="Users"
        description="The people who sign in to your apps: open one to edit, verify, sign out or ban them."
        actions={
          <Button variant="primary" icon={UserPlus} onClick={() => setQuery('new=1')}>
            New user
          </Button>
        }
      />
      <form
        role="search"
        class="inline"
        onSubmit={(e) => (
          e.preventDefault(), setOffset(0), setSearch(String(new FormData(e.currentTarget as HTMLFormElement).get('q')))
        )}
      >
        <label for="user-search">Search by email</label>
        <input id="user-search" name="q" type="search" />
        <Button type="submit" size="sm">
          Search
        </Button>
      </form>
      <ErrorBox error={error ?? act.error} />
      <UserGrid
        users={data?.data ?? []}
        loading={loading}
        searching={search !== ''}
        act={act}
        onNotice={notice}
        onOpen={(u) => setQuery(`open=${enc(u.id)}`)}
        onDelete={setDeleting}
        onNew={() => setQuery('new=1')}
      />
      {data && <Pager offset={offset} limit={LIMIT} total={data.pagination.total} onOffset={setOffset} noun="users" />}
      <Card title="Anonymous users">
        <AnonymousCleanup onDone={notice} />
      </Card>
      {open && <UserPanel userId={open} onClose={() => setQuery(null)} onChanged={reload} />}
      {creating && <CreateUser onClose={() => setQuery(null)} onDone={() => (setQuery(null), reload())} />}
      {deleting && (
        <Confirm
          what="user"
          name={label(deleting)}
          onClose={() => setDeleting(null)}
          onConfirm={() => api(`/api/auth/users/${deleting.id}`, { method: 'DELETE' }).then(reload)}
        />
      )}
    </section>
  );
}

function UserGrid(props: {
  users: User[];
  loading: boolean;
  searching: boolean;
  act: ReturnType<typeof useAction>;
  onNotice: (m: string) => void;
  onOpen: (u: User) => void;
  onDelete: (u: User) => void;
  onNew: () => void;
}) {
  return (
    <Grid
      label="Users"
      rows={props.users}
      loading={props.loading}
      rowKey={(u) => u.id}
      empty={
        props.searching ? (
          'No user matches.'
        ) : (
          <EmptyState
            icon={UsersIcon}
            title="No users yet"
            action={
              <Button variant="primary" icon={UserPlus} onClick={props.onNew}>
                Create a user
              </Button>
            }
          >
            Sign-up is open: people can create their account from your app with the SDK (see API keys &amp; connect). Or
            create one here.
          </EmptyState>
        )
      }
      columns={[
        {
          key: 'email',
          label: 'Email',
          cell: (u) => (
            <>
              {u.isAnonymous ? <em>anonymous</em> : u.email}
              {u.bannedUntil && (
                <>
                  {' '}
                  <Badge tone="danger">Banned</Badge>
                </>
              )}
            </>
          ),
        },
        {
          key: 'verified',
          label: 'Verified',
          cell: (u) =>
            u.isAnonymous ? (
              '–'
            ) : u.emailVerified ? (
              <Badge tone="success" plain>
                ✓ verified
              </Badge>
            ) : (
              <Badge>not verified</Badge>
            ),
        },
        { key: 'mfa', label: 'MFA', cell: (u) => mfaOf(u) },
        { key: 'name', label: 'Name', cell: (u) => u.profile?.name ?? '' },
        { key: 'id', label: 'Id', cell: (u) => <code>{u.id}</code> },
      ]}
      actions={(u) => (
        <UserActions
          u={u}
          act={props.act}
          onNotice={props.onNotice}
          onOpen={() => props.onOpen(u)}
          onDelete={() => props.onDelete(u)}
        />
      )}
    />
  );
}
