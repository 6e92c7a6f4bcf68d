// One queued mail in a side panel (GET /api/email/messages/{id}: metadata only, never its body),
// with Resend when it failed and its content is still held; and the "Send a test email" dialog.
import { api, enc } from '../api';
import { RotateCcw, Send } from '../components/icons';
import { Button, Dialog, ErrorBox, Field, SkeletonLines, toast, useAction, useLoad } from '../ui';
import { MESSAGES, type Message, notResendable, recipients, StatusBadge, useRefresh, when } from './email-common';

const CALLERS: Record<string, string> = { admin: 'the admin key', auth: 'auth (a sign-in code or link)' };
const callerOf = (c: string) =>
  CALLERS[c] ?? (c.startsWith('function:') ? `function ${c.slice(9)}` : c.replace(/^user:/, 'user '));

export function MessagePanel({
  id,
  resent,
  onClose,
  onResend,
}: {
  id: string;
  /** Bumped after a resend: the mail is read again. */
  resent: number;
  onClose: () => void;
  onResend: (m: Message) => void;
}) {
  const { data: m, error, reload } = useLoad(() => api<Message>(`${MESSAGES}/${enc(id)}`), [id, resent]);
  useRefresh(m?.status === 'queued', reload);
  const why = m && notResendable(m);
  return (
    <Dialog side title={m ? m.subject : 'Email'} label="Email" onClose={onClose}>
      <ErrorBox error={error} />
      {!m && !error && <SkeletonLines lines={6} label="Loading the email" />}
      {m && (
        <div class="stack">
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <StatusBadge m={m} />
            </dd>
            <dt>To</dt>
            <dd>{recipients(m)}</dd>
            <dt>Subject</dt>
            <dd>{m.subject}</dd>
            <dt>Kind</dt>
            <dd>{m.kind === 'auth' ? 'auth email (its code or link is never shown)' : 'sent through the email API'}</dd>
            <dt>Sent by</dt>
            <dd>{callerOf(m.caller)}</dd>
            <dt>Attempts</dt>
            <dd>{m.attempts}</dd>
            <dt>Queued</dt>
            <dd>{when(m.createdAt)}</dd>
            <dt>Last attempt</dt>
            <dd>{when(m.lastAttemptAt)}</dd>
            {m.sentAt && (
              <>
                <dt>Sent</dt>
                <dd>{when(m.sentAt)}</dd>
              </>
            )}
            {m.failedAt && (
              <>
                <dt>Failed</dt>
                <dd>{when(m.failedAt)}</dd>
              </>
            )}
            {m.expiresAt && (
              <>
                <dt>Code expires</dt>
                <dd>{when(m.expiresAt)}</dd>
              </>
            )}
            <dt>Id</dt>
            <dd>
              <code>{m.id}</code>
            </dd>
          </dl>
          {m.lastError && (
            <div>
              <h3>Last error</h3>
              <pre class="snippet wrap">{m.lastError}</pre>
            </div>
          )}
          {why ? (
            <p class="muted">Cannot be resent. {why}</p>
          ) : (
            <div class="actions">
              <Button variant="primary" icon={RotateCcw} onClick={() => onResend(m)}>
                Resend
              </Button>
            </div>
          )}
        </div>
      )}
    </Dialog>
  );
}

/** Sends one plain-text mail with the admin key (POST /api/email/send-raw): is SMTP working? */
export function TestEmail({ onClose, onSent }: { onClose: () => void; onSent: () => void }) {
  const act = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const to = String(f.get('to'));
    const body = { to, subject: String(f.get('subject')), text: String(f.get('text')) };
    if (await act.run(() => api('/api/email/send-raw', { method: 'POST', body }))) {
      toast(`Test email queued to ${to}.`);
      onSent();
    }
  };
  return (
    <Dialog title="Send a test email" onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        <Field id="test-to" label="To">
          <input id="test-to" name="to" type="email" required autocomplete="email" />
        </Field>
        <Field id="test-subject" label="Subject">
          <input id="test-subject" name="subject" required maxLength={998} defaultValue="Test email from Plinth" />
        </Field>
        <Field id="test-text" label="Text">
          <textarea
            id="test-text"
            name="text"
            rows={4}
            required
            defaultValue="If you can read this, Plinth sends mail through your SMTP server."
          />
        </Field>
        <ErrorBox error={act.error} />
        <div class="footer">
          <button type="button" class="ghost" onClick={onClose}>
            Cancel
          </button>
          <Button type="submit" variant="primary" icon={Send} disabled={act.busy}>
            Send
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
