-- Usage over time (docs/metrics.md): one sample per USAGE_SAMPLE_SECONDS, kept 30 days. `at` is
-- the end of an interval on the grid of multiples of the interval since the epoch, so instances
-- racing for the same interval insert one row; the sizes are read when sampled, the counts cover
-- the time from the previous sample to `at`. Function counts are null when the log store (where
-- invocations are recorded) is off.
create table if not exists system.usage_samples (
  at timestamptz primary key,
  database_bytes bigint not null,
  storage_bytes bigint not null,
  function_calls integer,
  function_errors integer,
  ai_tokens bigint not null
);
