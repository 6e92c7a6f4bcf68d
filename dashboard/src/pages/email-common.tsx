// What the Email page's parts share: a queued mail as GET /api/email/messages answers it, its
// status badge, its times, whether SMTP is configured, and resending a failed mail (confirmed,
// then a toast).
import { useEffect } from 'preact/hooks';
import { api, enc } from '../api';
import { Badge, ConfirmDialog, ErrorBox, toast, useAction } from '../ui';

export const MESSAGES = '/api/email/messages';

export interface Message {
  id: string;
  kind: 'raw' | 'auth';
  caller: string;
  to: string[];
  subject: string;
  status: 'queued' | 'sent' | 'failed';
  attempts: number;
  lastError: string | null;
  resendable: boolean;
  createdAt: string;
  lastAttemptAt: string | null;
  sentAt: string | null;
  failedAt: string | null;
  expiresAt: string | null;
}

/** While a shown mail is queued, it is read again this often (only while the tab is visible). */
const REFRESH_MS = 3000;

/** Calls `reload` every REFRESH_MS while `on` and the tab is visible: a queued mail's status follows. */
export function useRefresh(on: boolean, reload: () => void) {
  useEffect(() => {
    if (!on) return;
    const timer = setInterval(() => document.visibilityState === 'visible' && reload(), REFRESH_MS);
    return () => clearInterval(timer);
  }, [on, reload]);
}

export const when = (t: string | null) => (t ? new Date(t).toLocaleString() : '–');
/** A time as "12 s ago", "5 min ago", "3 h ago", "2 d ago", the full date and time as its tooltip. */
export function Ago({ t }: { t: string | null }) {
  if (!t) return <>–</>;
  const s = Math.max(0, Math.round((Date.now() - Date.parse(t)) / 1000));
  const text =
    s < 60
      ? `${s} s ago`
      : s < 3600
        ? `${Math.floor(s / 60)} min ago`
        : s < 86_400
          ? `${Math.floor(s / 3600)} h ago`
          : `${Math.floor(s / 86_400)} d ago`;
  return (
    <time dateTime={t} title={when(t)}>
      {text}
    </time>
  );
}
export const recipients = (m: Message) => m.to.join(', ');

/** The status as a pill: failed in the danger colour; a queued mail that already failed an attempt is "retrying". */
export function StatusBadge({ m }: { m: Message }) {
  if (m.status === 'failed') return <Badge tone="danger">failed</Badge>;
  if (m.status === 'sent') return <Badge tone="success">sent</Badge>;
  return m.attempts > 0 && m.lastError ? <Badge tone="warning">retrying</Badge> : <Badge tone="accent">queued</Badge>;
}

/** Why a mail cannot be resent, in the words the API uses (docs/email.md); null when it can. */
export function notResendable(m: Message): string | null {
  if (m.status === 'failed' && m.resendable) return null;
  if (m.status === 'queued') return 'It is still queued: it is being sent or retried.';
  if (m.status === 'sent') return 'It was sent; its content is not kept after sending.';
  if (m.kind === 'auth')
    return 'It carried a sign-in code or link, which is not kept once the mail failed: the user asks for a new code.';
  return 'Its content is no longer held.';
}

/** Whether SMTP is configured: the derived fact `smtp` of the effective configuration. */
export async function smtpConfigured(): Promise<boolean> {
  const { variables } = await api<{ variables: Array<{ name: string; source: string; value: string | null }> }>(
    '/api/admin/config',
  );
  const smtp = variables.find((v) => v.name === 'smtp' && v.source === 'derived');
  return !smtp || smtp.value === 'configured';
}

/** Asks before resending a failed mail (POST …/resend); a toast says it is queued again. */
export function ResendDialog({ m, onClose, onDone }: { m: Message; onClose: () => void; onDone: () => void }) {
  const act = useAction();
  return (
    <ConfirmDialog
      title="Resend this email"
      confirmLabel="Resend"
      error={<ErrorBox error={act.error} />}
      onClose={onClose}
      onConfirm={async () => {
        if (await act.run(() => api(`${MESSAGES}/${enc(m.id)}/resend`, { method: 'POST' }))) {
          toast(`Queued again: “${m.subject}” to ${recipients(m)}.`);
          onDone();
        }
      }}
    >
      <p>
        <strong>{m.subject}</strong> to {recipients(m)} failed after {m.attempts} attempt{m.attempts === 1 ? '' : 's'}.
        It is queued again with a fresh set of attempts; the page shows when it is sent.
      </p>
    </ConfirmDialog>
  );
}
