// Operations pages over endpoints other work adds (logs, schedules, webhooks, migrations,
// advisor): each shows "not available on this server" on a 404.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { Grid } from '../grid/grid';
import { SqlConfirm } from '../lib/confirm-sql';
import { ErrorBox, Modal, cellText, useAction, useLoad } from '../ui';
import { LoadState } from './notavailable';

type Rec = Record<string, unknown>;
/** The rows of a list answer, whatever its key (`data`, `logs`, `issues`, `migrations`, …). */
const KEYS = ['data', 'items', 'logs', 'issues', 'migrations', 'schedules', 'webhooks', 'deliveries', 'runs'];
const list = (d: unknown): Rec[] => {
  if (Array.isArray(d)) return d as Rec[];
  const o = (d ?? {}) as Record<string, unknown>;
  return (KEYS.map((k) => o[k]).find(Array.isArray) ?? []) as Rec[];
};

/** A grid of whatever objects an endpoint lists, columns from their keys. */
function AutoGrid({ label, rows, actions }: { label: string; rows: Rec[]; actions?: (r: Rec) => preact.ComponentChildren }) {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))].slice(0, 8);
  return <Grid<Rec> label={label} rows={rows} rowKey={(r, i) => String(r.id ?? i)} empty="Nothing yet." actions={actions} columns={keys.map((k) => ({ key: k, label: k, cell: (r) => cellText(r[k]) }))} />;
}

const LEVELS = ['debug', 'info', 'warn', 'error'];

/** Logs (issue 27's /api/logs): a source, the lowest level, text to find, live tail. */
export function Logs() {
  const sources = useLoad(() => api<{ sources: Array<{ name: string; count: number }> }>('/api/logs/sources'), []);
  const [source, setSource] = useState('api');
  const [level, setLevel] = useState('info');
  const [q, setQ] = useState('');
  const [live, setLive] = useState(false);
  const query = `limit=100&level=${level}${q ? `&q=${encodeURIComponent(q)}` : ''}`;
  const { data, error, reload } = useLoad(() => api(`/api/logs/${encodeURIComponent(source)}?${query}`), [source, query]);
  useEffect(() => {
    if (!live) return;
    const id = setInterval(() => document.visibilityState === 'visible' && reload(), 3000);
    return () => clearInterval(id);
  }, [live]);
  const names = sources.data?.sources.map((x) => x.name) ?? ['api'];
  return (
    <section class="stack">
      <h1>Logs</h1>
      <LoadState error={sources.error} what="The logs explorer" endpoint="GET /api/logs/sources">
        <form class="inline" role="search" onSubmit={(e) => (e.preventDefault(), setQ(String(new FormData(e.currentTarget as HTMLFormElement).get('q') ?? '')))}>
          <label for="log-source">Source</label>
          <select id="log-source" value={source} onChange={(e) => setSource(e.currentTarget.value)}>
            {names.map((n) => <option key={n}>{n}</option>)}
          </select>
          <label for="log-level">Level</label>
          <select id="log-level" value={level} onChange={(e) => setLevel(e.currentTarget.value)}>
            {LEVELS.map((n) => <option key={n}>{n}</option>)}
          </select>
          <label for="log-q">Contains</label>
          <input id="log-q" name="q" type="search" />
          <button type="submit">Filter</button>
          <label class="check">
            <input type="checkbox" checked={live} onChange={(e) => setLive(e.currentTarget.checked)} /> Live tail
          </label>
        </form>
        <ErrorBox error={error} />
        {data !== null && (
          <Grid<Rec>
            label="Log lines"
            rows={list(data)}
            rowKey={(r, i) => String(r.id ?? i)}
            empty="No lines match."
            columns={[
              { key: 'timestamp', label: 'Time', cell: (r) => new Date(String(r.timestamp)).toLocaleString(), cellClass: () => 'nowrap' },
              { key: 'level', label: 'Level', cell: (r) => cellText(r.level) },
              { key: 'message', label: 'Message', cell: (r) => cellText(r.eventMessage), cellClass: () => 'json' },
            ]}
          />
        )}
      </LoadState>
    </section>
  );
}

function Deliveries({ hook, onClose }: { hook: Rec; onClose: () => void }) {
  const path = `/api/database/webhooks/${encodeURIComponent(String(hook.id))}/deliveries`;
  const { data, error, reload } = useLoad(() => api(path), [path]);
  const act = useAction();
  return (
    <Modal title={`Deliveries of ${String(hook.name ?? hook.id)}`} onClose={onClose}>
      <LoadState error={error} what="The delivery log" endpoint={`GET ${path}`}>
        {data !== null && (
          <AutoGrid
            label="Deliveries"
            rows={list(data)}
            actions={(d) => (
              <button type="button" class="ghost" aria-label={`Redeliver ${String(d.id)}`} onClick={() => void act.run(() => api(`${path}/${encodeURIComponent(String(d.id))}/redeliver`, { method: 'POST' }).then(reload))}>
                Redeliver
              </button>
            )}
          />
        )}
        <ErrorBox error={act.error} />
      </LoadState>
    </Modal>
  );
}

export function Webhooks() {
  const { data, error } = useLoad(() => api('/api/database/webhooks'), []);
  const [hook, setHook] = useState<Rec | null>(null);
  return (
    <section class="stack">
      <h1>Webhooks</h1>
      <LoadState error={error} what="Webhooks" endpoint="GET /api/database/webhooks">
        {data !== null && (
          <AutoGrid
            label="Webhooks"
            rows={list(data)}
            actions={(r) => (
              <button type="button" class="ghost" aria-label={`Deliveries of ${String(r.name ?? r.id)}`} onClick={() => setHook(r)}>
                Deliveries
              </button>
            )}
          />
        )}
      </LoadState>
      {hook && <Deliveries hook={hook} onClose={() => setHook(null)} />}
    </section>
  );
}

interface DryRun {
  riskLevel: string;
  reasons: string[];
  status?: string;
  statements: Array<{ sql: string; kind: string; riskLevel: string; reasons: string[] }>;
}

/** A migration file checked without running it: its risk, and drift against what was applied. */
function DryRunForm() {
  const [result, setResult] = useState<DryRun | null>(null);
  const act = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const version = String(f.get('version') ?? '').trim();
    void act.run(async () => setResult(await api('/api/database/migrations/dry-run', { method: 'POST', body: { sql: String(f.get('sql')), ...(version ? { version } : {}) } })));
  };
  return (
    <form class="stack" aria-label="Check a migration" onSubmit={submit}>
      <h2>Check a migration (dry run, drift)</h2>
      <label for="mig-version">Version (to compare with the applied one)</label>
      <input id="mig-version" name="version" />
      <label for="mig-sql">SQL</label>
      <textarea id="mig-sql" name="sql" class="mono" rows={4} required spellcheck={false} />
      <div class="actions">
        <button type="submit" disabled={act.busy}>Check</button>
      </div>
      <ErrorBox error={act.error} />
      {result && (
        <p role="status">
          Risk {result.riskLevel}
          {result.status ? `; ${result.status === 'drift' ? 'drift: the applied migration of this version had other SQL' : result.status}` : ''}
          {result.reasons.length ? `: ${result.reasons.join('; ')}` : ''}
        </p>
      )}
      {result && (
        <Grid<DryRun['statements'][number]>
          label="Statements"
          rows={result.statements}
          rowKey={(_, i) => String(i)}
          columns={[
            { key: 'sql', label: 'Statement', cell: (r) => <code>{r.sql}</code> },
            { key: 'kind', label: 'Kind', cell: (r) => r.kind },
            { key: 'risk', label: 'Risk', cell: (r) => `${r.riskLevel}${r.reasons.length ? `: ${r.reasons.join('; ')}` : ''}` },
          ]}
        />
      )}
    </form>
  );
}

export function Migrations() {
  const { data, error } = useLoad(() => api('/api/database/migrations'), []);
  return (
    <section class="stack">
      <h1>Migrations</h1>
      <LoadState error={error} what="Migration history" endpoint="GET /api/database/migrations">
        {data !== null && (
          <>
            <Grid<Rec>
              label="Applied migrations"
              rows={list(data)}
              rowKey={(r, i) => String(r.version ?? i)}
              empty="No migrations applied yet."
              columns={[
                { key: 'version', label: 'Version', cell: (r) => cellText(r.version) },
                { key: 'name', label: 'Name', cell: (r) => cellText(r.name) },
                { key: 'statements', label: 'Statements', cell: (r) => cellText(r.statements), cellClass: () => 'num' },
                { key: 'checksum', label: 'Checksum', cell: (r) => <code>{String(r.checksum ?? '').slice(0, 12)}</code> },
                { key: 'appliedAt', label: 'Applied', cell: (r) => (r.appliedAt ? new Date(String(r.appliedAt)).toLocaleString() : '') },
              ]}
            />
            <DryRunForm />
          </>
        )}
      </LoadState>
    </section>
  );
}

export function Advisor() {
  const { data, error, reload } = useLoad(() => api('/api/advisor/issues'), []);
  const [fix, setFix] = useState<string | null>(null);
  const act = useAction();
  return (
    <section class="stack">
      <div class="row">
        <h1>Advisor</h1>
        {!error && <button type="button" disabled={act.busy} onClick={() => void act.run(() => api('/api/advisor/scan', { method: 'POST' }).then(reload))}>Scan now</button>}
      </div>
      <LoadState error={error ?? act.error} what="The advisor" endpoint="GET /api/advisor/issues">
        {data !== null && (
          <Grid<Rec>
            label="Findings"
            rows={list(data)}
            rowKey={(r, i) => String(r.key ?? i)}
            empty="No findings: nothing to fix."
            columns={[
              { key: 'severity', label: 'Severity', cell: (r) => <span class={r.severity === 'info' ? 'badge' : 'badge bad'}>{cellText(r.severity)}</span> },
              { key: 'title', label: 'Finding', cell: (r) => cellText(r.title) },
              { key: 'object', label: 'Object', cell: (r) => cellText((r.object as { name?: string } | undefined)?.name ?? '') },
              { key: 'why', label: 'Why it matters', cell: (r) => cellText(r.why ?? '') },
            ]}
            actions={(r) => (typeof r.fixSql === 'string' ? <button type="button" aria-label={`Fix ${String(r.key)}`} onClick={() => setFix(String(r.fixSql))}>Fix</button> : null)}
          />
        )}
      </LoadState>
      {fix && <SqlConfirm title="Apply the fix" sql={fix} onClose={() => setFix(null)} onDone={() => (setFix(null), void api('/api/advisor/scan', { method: 'POST' }).then(reload, reload))} />}
    </section>
  );
}
