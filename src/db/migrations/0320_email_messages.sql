-- Queued email (docs/email.md): every mail sent through the job queue, its state and attempts.
-- The job carries only the id. The content (`mail`) is kept only while the mail can still be
-- sent: erased once sent; for a mail with a sign-in code or link (`kind = 'auth'`) also once it
-- failed or its code expired (`expires_at`). `subject` is what the admin API lists: for auth
-- mails with codes and links masked.
create table if not exists email.messages (
  id uuid primary key default gen_random_uuid(),
  kind text not null check (kind in ('raw', 'auth')),
  caller text not null,
  recipients text[] not null,
  subject text not null,
  mail jsonb,
  status text not null default 'queued' check (status in ('queued', 'sent', 'failed')),
  attempts integer not null default 0,
  last_error text,
  created_at timestamptz not null default now(),
  last_attempt_at timestamptz,
  sent_at timestamptz,
  failed_at timestamptz,
  expires_at timestamptz
);
create index if not exists messages_status_created on email.messages (status, created_at desc);
create index if not exists messages_created on email.messages (created_at);
