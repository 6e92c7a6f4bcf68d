// Database › Tables: every table of schema public with its row estimate, size, RLS and realtime
// state; create one (from scratch or from a CSV file), open, drop. ?new=1 opens "New table".
import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { FileUp, Plus, Table2, Trash2 } from '../components/icons';
import { Grid } from '../grid/grid';
import { runSql } from '../lib/sql';
import { link, navigate, useSearch } from '../router';
import { Badge, Button, Confirm, EmptyState, ErrorBox, PageHeader, useLoad } from '../ui';
import { TableFromCsv } from './csv-table';
import { CreateTable } from './table-create';

export { ON_DELETE, TYPES } from './table-create';

interface TableStat {
  name: string;
  rows: number;
  bytes: number;
  rls: boolean;
  realtime: boolean;
}

/**
 * Row estimate, size, RLS and realtime of every table of schema public, in one query. The
 * estimate is the planner's once ANALYZE (or autovacuum) ran, before that the live-row counter.
 */
const STATS = `select c.relname::text as name,
  case when c.reltuples >= 0 then c.reltuples::bigint else coalesce(pg_stat_get_live_tuples(c.oid), 0) end as rows,
  pg_total_relation_size(c.oid) as bytes,
  c.relrowsecurity as rls, exists (select 1 from pg_trigger g where g.tgrelid = c.oid and g.tgname = 'plinth_realtime') as realtime
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where n.nspname = 'public' and c.relkind in ('r', 'p') order by c.relname`;

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1048576) return `${(n / 1024).toFixed(1)} KiB`;
  return n < 1073741824 ? `${(n / 1048576).toFixed(1)} MiB` : `${(n / 1073741824).toFixed(2)} GiB`;
}

export function Tables() {
  const { data, error, reload, loading } = useLoad(
    async () =>
      (await runSql<TableStat>(STATS)).rows.map((r) => ({ ...r, rows: Number(r.rows), bytes: Number(r.bytes) })),
    [],
  );
  const search = useSearch();
  const creating = search.get('new') === '1';
  const fromCsv = search.get('new') === 'csv';
  const open = (what: string | null) => navigate(what ? `/tables?new=${what}` : '/tables', { replace: !what });
  const [dropping, setDropping] = useState<string | null>(null);
  return (
    <section class="stack">
      <PageHeader
        title="Tables"
        description="Your data, in Postgres: every table gets a REST API at once, guarded by row-level security."
        actions={
          <>
            <Button icon={FileUp} onClick={() => open('csv')}>
              Import CSV
            </Button>
            <Button variant="primary" icon={Plus} onClick={() => open('1')}>
              New table
            </Button>
          </>
        }
      />
      <ErrorBox error={error} />
      <Grid
        label="Tables"
        rows={data ?? []}
        loading={loading}
        rowKey={(t) => t.name}
        empty={
          <EmptyState
            icon={Table2}
            title="No tables yet"
            action={
              <Button variant="primary" icon={Plus} onClick={() => open('1')}>
                Create a table
              </Button>
            }
          >
            Create one with its columns, or start from a CSV file with Import CSV. Row-level security is on from the
            start.
          </EmptyState>
        }
        columns={[
          { key: 'name', label: 'Table', cell: (t) => <a {...link(`/tables/${enc(t.name)}`)}>{t.name}</a> },
          { key: 'rows', label: 'Rows (estimate)', cell: (t) => t.rows.toLocaleString('en'), cellClass: () => 'num' },
          { key: 'size', label: 'Size', cell: (t) => bytes(t.bytes), cellClass: () => 'num' },
          {
            key: 'rls',
            label: 'RLS',
            cell: (t) => <Badge tone={t.rls ? 'success' : 'danger'}>{t.rls ? 'on' : 'off'}</Badge>,
          },
          {
            key: 'realtime',
            label: 'Realtime',
            cell: (t) => <Badge tone={t.realtime ? 'accent' : 'neutral'}>{t.realtime ? 'on' : 'off'}</Badge>,
          },
        ]}
        actions={(t) => (
          <Button
            variant="ghost danger"
            size="sm"
            icon={Trash2}
            aria-label={`Drop table ${t.name}`}
            onClick={() => setDropping(t.name)}
          >
            Drop
          </Button>
        )}
      />
      {creating && <CreateTable tables={data?.map((t) => t.name) ?? []} onClose={() => open(null)} />}
      {fromCsv && <TableFromCsv onClose={() => open(null)} />}
      {dropping && (
        <Confirm
          what="table"
          name={dropping}
          onClose={() => setDropping(null)}
          onConfirm={async () => {
            await api(`/api/database/tables/${enc(dropping)}`, { method: 'DELETE' });
            reload();
          }}
        />
      )}
    </section>
  );
}
