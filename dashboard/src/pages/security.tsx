// The Security tab: RLS and realtime toggles, the policies with a drop button, a policy
// editor with templates (SQL shown before it runs), and "test as user".
import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { Grid } from '../grid/grid';
import { SqlConfirm } from '../lib/confirm-sql';
import { TEMPLATES, ident, policySql, rlsSql, table as qtable, type PolicyDraft } from '../lib/sql';
import { link } from '../router';
import { Card, ErrorBox, useAction, useLoad } from '../ui';
import type { Schema } from './table-types';
import { ResultGrid } from './sql';

interface Policy {
  name: string;
  command: string;
  permissive: boolean;
  roles: string[];
  using: string | null;
  withCheck: string | null;
}

type Pending = { title: string; sql: string };

function PolicyEditor({ schema, propose }: { schema: Schema; propose: (p: Pending) => void }) {
  const owner = schema.columns.find((c) => c.type === 'uuid' && /owner|user/.test(c.name))?.name ?? '';
  const [d, setD] = useState<PolicyDraft>({
    template: 'owner',
    name: `${schema.tableName}_owner`,
    command: 'all',
    column: owner,
  });
  const [error, setError] = useState<unknown>(null);
  const submit = (e: Event) => {
    e.preventDefault();
    try {
      setError(null);
      propose({ title: `Create policy ${d.name}`, sql: policySql(schema.tableName, d) });
    } catch (err) {
      setError(err);
    }
  };
  const needsColumn = d.template === 'owner' || d.template === 'column_owner';
  return (
    <form class="inline" aria-label="New policy" onSubmit={submit}>
      <h2>New policy</h2>
      <label for="pol-template">Template</label>
      <select
        id="pol-template"
        value={d.template}
        onChange={(e) =>
          setD({ ...d, template: e.currentTarget.value, name: `${schema.tableName}_${e.currentTarget.value}` })
        }
      >
        {Object.entries(TEMPLATES).map(([k, v]) => (
          <option key={k} value={k}>
            {v.label}
          </option>
        ))}
      </select>
      <label for="pol-name">Name</label>
      <input id="pol-name" required value={d.name} onInput={(e) => setD({ ...d, name: e.currentTarget.value })} />
      {d.template === 'owner' && (
        <>
          <label for="pol-cmd">Command</label>
          <select id="pol-cmd" value={d.command} onChange={(e) => setD({ ...d, command: e.currentTarget.value })}>
            {['all', 'select', 'insert', 'update', 'delete'].map((c) => (
              <option key={c}>{c}</option>
            ))}
          </select>
        </>
      )}
      {needsColumn && (
        <>
          <label for="pol-col">Owner column</label>
          <select
            id="pol-col"
            required
            value={d.column}
            onChange={(e) => setD({ ...d, column: e.currentTarget.value })}
          >
            <option value="">choose</option>
            {schema.columns.map((c) => (
              <option key={c.name}>{c.name}</option>
            ))}
          </select>
        </>
      )}
      <p class="muted">{TEMPLATES[d.template]?.note}</p>
      <ErrorBox error={error} />
      <button type="submit">Review SQL</button>
    </form>
  );
}

function TestAs({ table }: { table: string }) {
  const users = useLoad(() => api<{ data: Array<{ id: string; email: string }> }>('/api/auth/users?limit=100'), []);
  const [who, setWho] = useState('');
  const [query, setQuery] = useState(`select * from public."${table}" limit 50`);
  const [result, setResult] = useState<{ rows: Record<string, unknown>[]; rowCount: number; role: string } | null>(
    null,
  );
  const act = useAction();
  const run = (e: Event) => {
    e.preventDefault();
    void act.run(async () =>
      setResult(await api('/api/database/sql/as', { method: 'POST', body: { query, userId: who || null } })),
    );
  };
  return (
    <form class="stack" aria-label="Test as user" onSubmit={run}>
      <h2>Test as user</h2>
      <p class="muted">
        Runs as that user (role authenticated, their auth.uid()) or with the anon key, then rolls back: nothing is kept.
      </p>
      <label for="as-who">Run as</label>
      <select id="as-who" value={who} onChange={(e) => setWho(e.currentTarget.value)}>
        <option value="">anon (no session)</option>
        {users.data?.data.map((u) => (
          <option key={u.id} value={u.id}>
            {u.email}
          </option>
        ))}
      </select>
      <label for="as-query">Query</label>
      <textarea
        id="as-query"
        class="mono"
        rows={3}
        value={query}
        onInput={(e) => setQuery(e.currentTarget.value)}
        spellcheck={false}
      />
      <div class="actions">
        <button type="submit" disabled={act.busy}>
          Run as {who ? 'user' : 'anon'}
        </button>
      </div>
      <ErrorBox error={act.error ?? users.error} />
      {result && (
        <p role="status">
          As {result.role}: {result.rowCount} row{result.rowCount === 1 ? '' : 's'} visible.
        </p>
      )}
      {result && <ResultGrid rows={result.rows} label="Rows as that caller sees them" />}
    </form>
  );
}

export function Security({ schema, onChanged }: { schema: Schema; onChanged: () => void }) {
  const table = schema.tableName;
  const { data, error, reload } = useLoad(
    () => api<{ policies: Policy[] }>(`/api/database/tables/${enc(table)}/policies`),
    [table],
  );
  const [pending, setPending] = useState<Pending | null>(null);
  const act = useAction();
  const realtime = () =>
    act.run(() =>
      api(`/api/database/tables/${enc(table)}/realtime`, { method: schema.realtime ? 'DELETE' : 'POST' }).then(
        onChanged,
      ),
    );
  return (
    <div class="stack">
      <div class="row">
        <label class="check">
          <input
            type="checkbox"
            role="switch"
            checked={schema.rlsEnabled}
            onChange={() =>
              setPending({
                title: `${schema.rlsEnabled ? 'Disable' : 'Enable'} row-level security`,
                sql: rlsSql(table, !schema.rlsEnabled),
              })
            }
          />
          Row-level security
        </label>
        <label class="check">
          <input
            type="checkbox"
            role="switch"
            checked={schema.realtime}
            disabled={act.busy}
            onChange={() => void realtime()}
          />
          Realtime (changes published on channel table:{table})
        </label>
      </div>
      {!schema.rlsEnabled && (
        <p class="warn">
          Row-level security is off: anyone with the anon key can read and write every row, and the policies below are
          not enforced.
        </p>
      )}
      <ErrorBox error={error ?? act.error} />
      <Grid
        label="Policies"
        rows={data?.policies ?? []}
        rowKey={(p) => p.name}
        empty="No policies."
        columns={[
          { key: 'name', label: 'Name', cell: (p) => `${p.name}${p.permissive ? '' : ' (restrictive)'}` },
          { key: 'command', label: 'Command', cell: (p) => p.command },
          { key: 'roles', label: 'Roles', cell: (p) => p.roles.join(', ') },
          { key: 'using', label: 'Using', cell: (p) => <code>{p.using ?? ''}</code> },
          { key: 'check', label: 'With check', cell: (p) => <code>{p.withCheck ?? ''}</code> },
        ]}
        actions={(p) => (
          <button
            type="button"
            class="ghost danger"
            aria-label={`Drop policy ${p.name}`}
            onClick={() =>
              setPending({ title: `Drop policy ${p.name}`, sql: `drop policy ${ident(p.name)} on ${qtable(table)};` })
            }
          >
            Drop
          </button>
        )}
      />
      <p class="row">
        <a {...link(`/sql?table=${enc(table)}`)}>Add a policy in the SQL editor</a>
        <button type="button" class="ghost" onClick={reload}>
          Refresh
        </button>
      </p>
      <div class="two">
        <Card>
          <PolicyEditor schema={schema} propose={setPending} />
        </Card>
        <Card>
          <TestAs table={table} />
        </Card>
      </div>
      {pending && (
        <SqlConfirm
          title={pending.title}
          sql={pending.sql}
          onClose={() => setPending(null)}
          onDone={() => (setPending(null), reload(), onChanged())}
        />
      )}
    </div>
  );
}
