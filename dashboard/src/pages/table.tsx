// One table: its rows, its schema, its security (RLS, realtime, policies, test as user) and
// ready-to-copy API snippets.
import { api, enc } from '../api';
import { CodeXml, Columns3, Rows3, ShieldCheck } from '../components/icons';
import { Badge, ErrorBox, LinkTabs, PageHeader, SkeletonLines, useLoad } from '../ui';
import { ApiHelp } from './apihelp';
import { Rows } from './rows';
import { SchemaEditor } from './schema';
import { Security } from './security';
import type { Schema } from './table-types';

export type { Column, Schema } from './table-types';

const TABS = [
  ['rows', 'Rows', Rows3],
  ['schema', 'Schema', Columns3],
  ['policies', 'Policies', ShieldCheck],
  ['api', 'API', CodeXml],
] as const;

export function TablePage({ params }: { params: string[] }) {
  const table = params[0]!;
  const tab = TABS.some(([t]) => t === params[1]) ? params[1]! : 'rows';
  const { data, error, reload } = useLoad(() => api<Schema>(`/api/database/tables/${enc(table)}/schema`), [table]);
  return (
    <section>
      <PageHeader
        crumbs={[['Tables', '/tables']]}
        title={table}
        extra={
          data && (
            <>
              <Badge tone={data.rlsEnabled ? 'success' : 'danger'}>RLS {data.rlsEnabled ? 'on' : 'off'}</Badge>
              {data.realtime && <Badge tone="accent">realtime</Badge>}
            </>
          )
        }
      />
      <LinkTabs
        label="Table views"
        current={`/tables/${enc(table)}/${tab}`}
        tabs={TABS.map(([t, label, icon]) => ({ href: `/tables/${enc(table)}/${t}`, label, icon }))}
      />
      <ErrorBox error={error} />
      {!data && !error && <SkeletonLines lines={6} label={`Loading ${table}`} />}
      {data && tab === 'rows' && <Rows table={table} columns={data.columns} />}
      {data && tab === 'schema' && <SchemaEditor schema={data} onChanged={reload} />}
      {data && tab === 'policies' && <Security schema={data} onChanged={reload} />}
      {data && tab === 'api' && <ApiHelp schema={data} />}
    </section>
  );
}
