-- A log line's fields as json, not jsonb (issue #38; docs/decisions.md, "The log store's fields
-- as json"). Each stored line cost Postgres ~7.7 µs of CPU, half of it building the jsonb of its
-- fields; as json the text is only checked (5.3 µs), and autovacuum's ANALYZE no longer sorts
-- and compares the jsonb values of 30,000 sampled lines (6.7 µs a sampled line → 0.5). No query
-- uses a jsonb operator or index on fields; the reads extract them once per line.
alter table system.logs alter column fields drop default;
alter table system.logs alter column fields type json using fields::json;
alter table system.logs alter column fields set default '{}'::json;
