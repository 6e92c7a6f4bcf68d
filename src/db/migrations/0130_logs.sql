-- The log store (docs/logs.md): every source's lines in one table, written in batches off the
-- request path, kept for LOGS_RETENTION_DAYS and at most LOGS_MAX_ROWS lines (oldest dropped).
create table if not exists system.logs (
  id bigserial primary key,
  time timestamptz not null,
  source text not null,
  level text not null,
  message text not null,
  fields jsonb not null default '{}'::jsonb
);
-- Reads are "the newest lines of a source", paged by id; retention deletes by time, which
-- grows with id: a BRIN index costs nearly nothing on insert.
create index if not exists logs_source_id on system.logs (source, id);
create index if not exists logs_time_brin on system.logs using brin (time);
