-- A secret may be limited to some functions (by slug); null means every function sees it.
alter table functions.secrets add column if not exists functions text[];
