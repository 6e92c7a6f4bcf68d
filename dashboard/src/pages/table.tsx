// One table: its rows, its schema, its security (RLS, realtime, policies, test as user) and
// ready-to-copy API snippets.
import { api, enc } from '../api';
import { link } from '../router';
import { ErrorBox, useLoad } from '../ui';
import { ApiHelp } from './apihelp';
import { Rows } from './rows';
import { SchemaEditor } from './schema';
import { Security } from './security';

export interface Column {
  name: string;
  type: string;
  nullable: boolean;
  unique: boolean;
  default: string | null;
  isPrimaryKey: boolean;
  foreignKey: { table: string; column: string; on_delete: string } | null;
}

export interface Schema {
  tableName: string;
  rlsEnabled: boolean;
  realtime: boolean;
  columns: Column[];
}

const TABS = [
  ['rows', 'Rows'],
  ['schema', 'Schema'],
  ['policies', 'Policies'],
  ['api', 'API'],
] as const;

export function TablePage({ params }: { params: string[] }) {
  const table = params[0]!;
  const tab = TABS.some(([t]) => t === params[1]) ? params[1]! : 'rows';
  const { data, error, reload } = useLoad(() => api<Schema>(`/api/database/tables/${enc(table)}/schema`), [table]);
  return (
    <section>
      <p class="crumbs">
        <a {...link('/tables')}>Tables</a> / {table}
      </p>
      <div class="row">
        <h1>{table}</h1>
        {data && <span class={data.rlsEnabled ? 'badge' : 'badge bad'}>RLS {data.rlsEnabled ? 'on' : 'off'}</span>}
        {data?.realtime && <span class="badge">realtime</span>}
      </div>
      <nav class="tabs" aria-label="Table views">
        {TABS.map(([t, label]) => (
          <a key={t} {...link(`/tables/${enc(table)}/${t}`)} aria-current={t === tab ? 'page' : undefined}>
            {label}
          </a>
        ))}
      </nav>
      <ErrorBox error={error} />
      {data && tab === 'rows' && <Rows table={table} columns={data.columns} />}
      {data && tab === 'schema' && <SchemaEditor schema={data} onChanged={reload} />}
      {data && tab === 'policies' && <Security schema={data} onChanged={reload} />}
      {data && tab === 'api' && <ApiHelp schema={data} />}
    </section>
  );
}
