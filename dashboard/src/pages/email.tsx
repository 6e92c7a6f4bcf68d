// Email (/dashboard/email): the mail Plinth queued (GET /api/email/messages), newest first, with
// its status, attempts and last error; filter by status; a failed mail marked and resendable
// (confirmed, then a toast); a side panel per mail; a test email; the auth email templates
// (/dashboard/email/templates). The URL is the state: ?status, ?offset, ?open=<id>, ?test=1.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../api';
import { FileText, Icon, Mail, RefreshCw, RotateCcw, Send, Settings as SettingsIcon } from '../components/icons';
import { Grid } from '../grid/grid';
import { link, navigate, useSearch } from '../router';
import { Button, EmptyState, LinkTabs, PageHeader, SkeletonLines, useLoad } from '../ui';
import {
  Ago,
  MESSAGES,
  type Message,
  notResendable,
  recipients,
  ResendDialog,
  StatusBadge,
  smtpConfigured,
  useRefresh,
} from './email-common';
import { MessagePanel, TestEmail } from './email-panel';
import { Templates } from './email-templates';
import { LoadState } from './notavailable';

const LIMIT = 50;
const STATUSES = ['queued', 'sent', 'failed'] as const;
/** The query of the messages tab with some keys changed (null removes one). */
function queryWith(q: URLSearchParams, change: Record<string, string | null>): string {
  const next = new URLSearchParams(q);
  for (const [k, v] of Object.entries(change)) {
    if (v === null) next.delete(k);
    else next.set(k, v);
  }
  const s = next.toString();
  return s ? `/email?${s}` : '/email';
}

/** What the list shows when it has nothing: set up SMTP, or send a test email. */
function NoMail({ status, onTest }: { status: string | null; onTest: () => void }) {
  const smtp = useLoad(smtpConfigured, []);
  if (status === 'failed')
    return (
      <EmptyState icon={Mail} title="No failed email">
        Every queued mail was sent or is still being tried.
      </EmptyState>
    );
  if (status)
    return (
      <EmptyState icon={Mail} title={`No ${status} email`}>
        Nothing in this state right now.
      </EmptyState>
    );
  if (smtp.data === null && !smtp.error) return <SkeletonLines lines={2} label="Loading" />;
  return smtp.data === false ? (
    <EmptyState
      icon={Mail}
      title="No email yet"
      action={
        <a class="button primary" {...link('/settings?q=SMTP')}>
          Set up SMTP
        </a>
      }
    >
      SMTP is not configured, so mail is written to the server log instead of being sent. Set SMTP_URL and MAIL_FROM
      where the server runs (docs/email.md) and restart; then sign-up codes and mail from your functions are queued,
      retried and listed here.
    </EmptyState>
  ) : (
    <EmptyState
      icon={Mail}
      title="No email yet"
      action={
        <Button variant="primary" icon={Send} onClick={onTest}>
          Send a test email
        </Button>
      }
    >
      Mail sent through Plinth (sign-up codes, password resets, your functions' mail) is listed here with its status. A
      mail that fails is retried for hours, then marked failed here, where you can resend it.
    </EmptyState>
  );
}

/** How many mails failed (up to 200), with a link to them; shown on the unfiltered list. */
function FailedBanner({ seen }: { seen: unknown }) {
  const failed = useLoad(() => api<Message[]>(`${MESSAGES}?status=failed&limit=200`), [seen]);
  const n = failed.data?.length ?? 0;
  if (!n) return null;
  return (
    <div class="warn" role="status">
      <p>
        <strong>{n === 200 ? '200 or more emails' : `${n} email${n === 1 ? '' : 's'}`} failed</strong> after every
        retry. <a {...link('/email?status=failed')}>Show failed email</a> to read the errors and resend.
      </p>
    </div>
  );
}

/** Newer / older pages of LIMIT mails (the API gives no total). */
function Pages({
  offset,
  count,
  go,
}: {
  offset: number;
  count: number;
  go: (c: Record<string, string | null>) => void;
}) {
  if (offset === 0 && count < LIMIT) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <span aria-live="polite">{count ? `${offset + 1}–${offset + count}, newest first` : 'No more email'}</span>
      <Button
        size="sm"
        disabled={offset === 0}
        onClick={() => go({ offset: offset > LIMIT ? String(offset - LIMIT) : null })}
      >
        ← Newer
      </Button>
      <Button size="sm" disabled={count < LIMIT} onClick={() => go({ offset: String(offset + LIMIT) })}>
        Older →
      </Button>
    </nav>
  );
}

function Messages() {
  const q = useSearch();
  const status = STATUSES.find((s) => s === q.get('status')) ?? null;
  const offset = Math.max(0, Number(q.get('offset')) || 0);
  const open = q.get('open');
  const go = (change: Record<string, string | null>, replace = false) => navigate(queryWith(q, change), { replace });
  const [resending, setResending] = useState<Message | null>(null);
  // Bumped after a resend: the open panel reads its mail again.
  const [resent, setResent] = useState(0);
  const path = `${MESSAGES}?limit=${LIMIT}&offset=${offset}${status ? `&status=${status}` : ''}`;
  const { data, error, reload, loading } = useLoad(() => api<Message[]>(path), [path]);
  useRefresh(!!data?.some((m) => m.status === 'queued'), reload);
  return (
    <div class="stack">
      <div class="toolbar">
        <form class="inline" aria-label="Filter email" onSubmit={(e) => e.preventDefault()}>
          <label for="email-status">Status</label>
          <select
            id="email-status"
            value={status ?? ''}
            onChange={(e) => go({ status: e.currentTarget.value || null, offset: null })}
          >
            <option value="">All</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </form>
        <Button icon={RefreshCw} onClick={reload}>
          Refresh
        </Button>
        <Button icon={Send} onClick={() => go({ test: '1' })}>
          Send a test email
        </Button>
      </div>
      {!status && <FailedBanner seen={data} />}
      <LoadState error={error} what="The email list" endpoint={`GET ${MESSAGES}`}>
        <MessageGrid
          rows={data ?? []}
          loading={loading}
          empty={<NoMail status={status} onTest={() => go({ test: '1' })} />}
          onOpen={(m) => go({ open: m.id })}
          onResend={setResending}
        />
        {data && <Pages offset={offset} count={data.length} go={go} />}
      </LoadState>
      {open && (
        <MessagePanel id={open} resent={resent} onClose={() => go({ open: null }, true)} onResend={setResending} />
      )}
      {q.get('test') === '1' && (
        <TestEmail onClose={() => go({ test: null }, true)} onSent={() => (go({ test: null }, true), reload())} />
      )}
      {resending && (
        <ResendDialog
          m={resending}
          onClose={() => setResending(null)}
          onDone={() => (setResending(null), setResent((n) => n + 1), reload())}
        />
      )}
    </div>
  );
}

function MessageGrid(props: {
  rows: Message[];
  loading: boolean;
  empty: ComponentChildren;
  onOpen: (m: Message) => void;
  onResend: (m: Message) => void;
}) {
  return (
    <Grid<Message>
      label="Email"
      rows={props.rows}
      loading={props.loading}
      rowKey={(m) => m.id}
      empty={props.empty}
      columns={[
        { key: 'status', label: 'Status', cell: (m) => <StatusBadge m={m} /> },
        { key: 'to', label: 'To', cell: (m) => recipients(m) },
        {
          key: 'subject',
          label: 'Subject',
          cell: (m) =>
            m.kind === 'auth' ? (
              <>
                {m.subject} <span class="muted">(auth)</span>
              </>
            ) : (
              m.subject
            ),
        },
        { key: 'attempts', label: 'Attempts', cell: (m) => m.attempts, cellClass: () => 'num' },
        {
          key: 'when',
          label: 'When',
          cell: (m) => (
            <>
              {m.sentAt ? 'sent' : m.failedAt ? 'failed' : 'queued'} <Ago t={m.sentAt ?? m.failedAt ?? m.createdAt} />
            </>
          ),
          cellClass: () => 'nowrap',
        },
        {
          key: 'lastError',
          label: 'Last error',
          cell: (m) =>
            m.lastError && (
              <span class="wrap-text" title={m.lastError}>
                {m.lastError}
              </span>
            ),
        },
      ]}
      actions={(m) => (
        <>
          <button
            type="button"
            class="sm"
            aria-label={`Open email ${m.subject} to ${recipients(m)}`}
            onClick={() => props.onOpen(m)}
          >
            Open
          </button>
          {!notResendable(m) && (
            <Button
              size="sm"
              variant="primary"
              icon={RotateCcw}
              aria-label={`Resend ${m.subject} to ${recipients(m)}`}
              onClick={() => props.onResend(m)}
            >
              Resend
            </Button>
          )}
        </>
      )}
    />
  );
}

const TABS = [
  { href: '/email', label: 'Messages', icon: Mail },
  { href: '/email/templates', label: 'Templates', icon: FileText },
];

export function Email({ params }: { params: string[] }) {
  const tab = params[0] === 'templates' ? '/email/templates' : '/email';
  return (
    <section class="stack">
      <PageHeader
        title="Email"
        description="The mail Plinth sends (sign-up codes, password resets, your functions' mail): what was sent, what is being retried and what failed, and the templates of the auth emails."
        actions={
          <a class="button ghost" {...link('/settings?q=SMTP')}>
            <Icon icon={SettingsIcon} />
            SMTP settings
          </a>
        }
      />
      <LinkTabs label="Email" current={tab} tabs={TABS} />
      {tab === '/email' ? <Messages /> : <Templates />}
    </section>
  );
}
