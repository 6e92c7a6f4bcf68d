// The API tab: ready-to-copy snippets for @insforge/sdk, postgrest-js and curl, for this table.
import { api } from '../api';
import { Snippet } from '../components/snippet';
import { useLoad } from '../ui';
import type { Schema } from './table-types';

export function ApiHelp({ schema }: { schema: Schema }) {
  const key = useLoad(() => api<{ anonKey: string }>('/api/keys/anon'), []);
  const t = schema.tableName;
  const base = location.origin;
  const anon = key.data?.anonKey ?? '<anon key>';
  const sample =
    schema.columns.find((c) => c.type === 'string' && !c.isPrimaryKey)?.name ?? schema.columns[0]?.name ?? 'id';
  return (
    <div class="stack">
      <p class="muted">
        Calls with the anon key act as anon; a signed-in user's access token makes them act as that user. Row-level
        security decides what each sees.
      </p>
      <Snippet
        title="@insforge/sdk"
        code={`import { createClient } from '@insforge/sdk';

const client = createClient({ baseUrl: '${base}', anonKey: '${anon}' });
const { data, error } = await client.database.from('${t}').select('*').limit(20);
await client.database.from('${t}').insert([{ ${sample}: 'value' }]);
await client.database.from('${t}').update({ ${sample}: 'new' }).eq('id', '<id>');
await client.database.from('${t}').delete().eq('id', '<id>');`}
      />
      <Snippet
        title="postgrest-js"
        code={`import { PostgrestClient } from '@supabase/postgrest-js';

const db = new PostgrestClient('${base}/api/db', {
  headers: { apikey: '${anon}' },
});
const { data, error } = await db.from('${t}').select('*').order('${sample}').range(0, 19);`}
      />
      <Snippet
        title="curl"
        code={`# read (Prefer: count=exact gives the total in Content-Range)
curl '${base}/api/database/records/${t}?limit=20' -H 'apikey: ${anon}'
# insert
curl -X POST '${base}/api/database/records/${t}' -H 'apikey: ${anon}' \\
  -H 'content-type: application/json' -d '[{"${sample}": "value"}]'`}
      />
    </div>
  );
}
