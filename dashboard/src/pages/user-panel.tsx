// One user in a side panel: identities and sessions, edit the name, mark verified, send a
// verification or password-reset email, sign out everywhere, ban (until a time, with a reason) or unban. What the admin user API lacks
// (identities, sessions, the name, the verified flag) goes through the admin SQL endpoint
// with bind parameters.
import { useEffect, useRef } from 'preact/hooks';
import { api } from '../api';
import { Icon, X } from '../components/icons';
import { Grid } from '../grid/grid';
import { ErrorBox, toast, useAction, useLoad } from '../ui';

interface Detail {
  id: string;
  email: string;
  emailVerified: boolean;
  profile?: { name?: string };
  providers?: string[];
  createdAt?: string;
  bannedUntil?: string | null;
  banReason?: string | null;
}

/** When a ban ends, as the panel says it. */
const banEnd = (until: string) =>
  until === 'infinity' ? 'until unbanned' : `until ${new Date(until).toLocaleString()}`;

/**
 * Ban (optional end time and reason; it ends every session) or unban: PATCH
 * /api/auth/users/{id} with {banned}.
 */
function BanControl({ u, act, done }: { u: Detail; act: ReturnType<typeof useAction>; done: (msg: string) => void }) {
  const patch = (body: Record<string, unknown>) => api(`/api/auth/users/${u.id}`, { method: 'PATCH', body });
  if (u.bannedUntil) {
    return (
      <div class="row">
        <p>
          <span class="badge bad">Banned</span> {banEnd(u.bannedUntil)}
          {u.banReason ? ` · ${u.banReason}` : ''}
        </p>
        <button
          type="button"
          disabled={act.busy}
          onClick={() => void act.run(() => patch({ banned: false }).then(() => done('Ban lifted.')))}
        >
          Unban
        </button>
      </div>
    );
  }
  const ban = (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const until = String(f.get('until') ?? '');
    const reason = String(f.get('reason') ?? '').trim();
    const body = {
      banned: true,
      ...(until ? { bannedUntil: new Date(until).toISOString() } : {}),
      ...(reason ? { banReason: reason } : {}),
    };
    void act.run(() => patch(body).then(() => done('User banned; their sessions have ended.')));
  };
  return (
    <form onSubmit={ban} aria-label="Ban user">
      <fieldset class="stack">
        <legend>Ban</legend>
        <div class="fields">
          <div class="field">
            <label for="ban-until">
              Until <span class="hint">empty: until unbanned</span>
            </label>
            <input id="ban-until" name="until" type="datetime-local" />
          </div>
          <div class="field">
            <label for="ban-reason">
              Reason <span class="hint">optional</span>
            </label>
            <input id="ban-reason" name="reason" maxLength={500} autocomplete="off" />
          </div>
        </div>
        <div class="actions">
          <button type="submit" class="danger" disabled={act.busy}>
            Ban
          </button>
          <span class="muted">Ends every session of this user at once.</span>
        </div>
      </fieldset>
    </form>
  );
}

export function UserPanel({
  userId,
  onClose,
  onChanged,
}: {
  userId: string;
  onClose: () => void;
  onChanged: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => ref.current?.showModal(), []);
  const act = useAction();
  const user = useLoad(() => api<{ user: Detail }>(`/api/auth/users/${userId}`), [userId]);
  const extra = useLoad(async () => {
    const [ids, sessions] = await Promise.all([
      api<{ identities: Array<{ provider: string; email: string | null; lastSignInAt: string }> }>(
        `/api/auth/users/${userId}/identities`,
      ),
      api<{ sessions: Array<{ id: string; createdAt: string; expiresAt: string }> }>(
        `/api/auth/users/${userId}/sessions`,
      ),
    ]);
    return { ids: ids.identities, sessions: sessions.sessions };
  }, [userId]);
  const u = user.data?.user;
  const done = (msg: string) => (toast(msg), user.reload(), extra.reload(), onChanged());
  const save = (e: Event) => {
    e.preventDefault();
    const name = String(new FormData(e.currentTarget as HTMLFormElement).get('name') ?? '');
    void act.run(() =>
      api(`/api/auth/users/${userId}`, { method: 'PATCH', body: { name } }).then(() => done('Name saved.')),
    );
  };
  return (
    <dialog ref={ref} class="side" aria-label="User" onClose={onClose} onCancel={onClose}>
      <header class="row">
        <h2>{u?.email ?? 'User'}</h2>
        <button type="button" class="ghost icon-only sm" aria-label="Close" title="Close" onClick={onClose}>
          <Icon icon={X} />
        </button>
      </header>
      <ErrorBox error={user.error ?? extra.error ?? act.error} />
      {u && (
        <div class="stack">
          <p>
            <code>{u.id}</code> · {u.emailVerified ? '✓ verified' : 'not verified'} · created{' '}
            {u.createdAt ? new Date(u.createdAt).toLocaleString() : ''}
          </p>
          <form class="inline" onSubmit={save} aria-label="Edit user">
            <label for="user-name">Name</label>
            <input id="user-name" name="name" defaultValue={u.profile?.name ?? ''} />
            <button type="submit" disabled={act.busy}>
              Save
            </button>
          </form>
          <BanControl u={u} act={act} done={done} />
          <div class="actions">
            {!u.emailVerified && (
              <button
                type="button"
                onClick={() =>
                  void act.run(() =>
                    api(`/api/auth/users/${userId}`, { method: 'PATCH', body: { emailVerified: true } }).then(() =>
                      done('Marked verified.'),
                    ),
                  )
                }
              >
                Mark verified
              </button>
            )}
            {!u.emailVerified && (
              <button
                type="button"
                onClick={() =>
                  void act.run(() =>
                    api('/api/auth/email/send-verification', { method: 'POST', body: { email: u.email } }).then(() =>
                      done('Verification email sent.'),
                    ),
                  )
                }
              >
                Send verification email
              </button>
            )}
            <button
              type="button"
              onClick={() =>
                void act.run(() =>
                  api('/api/auth/email/send-reset-password', { method: 'POST', body: { email: u.email } }).then(() =>
                    done('Password reset email sent.'),
                  ),
                )
              }
            >
              Send password reset
            </button>
            <button
              type="button"
              onClick={() =>
                void act.run(async () =>
                  done(
                    (await api<{ message: string }>(`/api/auth/users/${userId}/sessions`, { method: 'DELETE' }))
                      .message,
                  ),
                )
              }
            >
              Sign out everywhere
            </button>
          </div>
          <h3>Identities</h3>
          <Grid
            label="Identities"
            rows={extra.data?.ids ?? []}
            rowKey={(i) => i.provider}
            empty={`Password account only (${(u.providers ?? []).join(', ') || 'email'}).`}
            columns={[
              { key: 'p', label: 'Provider', cell: (i) => i.provider },
              { key: 'e', label: 'Email', cell: (i) => i.email ?? '' },
              { key: 'l', label: 'Last sign-in', cell: (i) => new Date(i.lastSignInAt).toLocaleString() },
            ]}
          />
          <h3>Sessions</h3>
          <Grid
            label="Sessions"
            rows={extra.data?.sessions ?? []}
            rowKey={(s) => s.id}
            empty="No live sessions."
            columns={[
              { key: 'c', label: 'Started', cell: (s) => new Date(s.createdAt).toLocaleString() },
              { key: 'x', label: 'Expires', cell: (s) => new Date(s.expiresAt).toLocaleString() },
            ]}
          />
        </div>
      )}
    </dialog>
  );
}
