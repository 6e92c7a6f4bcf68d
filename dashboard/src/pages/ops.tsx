// Operations pages over endpoints other work adds (migrations, advisor): each shows "not
// available on this server" on a 404.
import { useState } from 'preact/hooks';
import { api } from '../api';
import { Grid } from '../grid/grid';
import { SqlConfirm } from '../lib/confirm-sql';
import { Button, cellText, ErrorBox, PageHeader, useAction, useLoad } from '../ui';
import { LoadState } from './notavailable';
import { RefreshCw } from '../components/icons';

type Rec = Record<string, unknown>;
/** The rows of a list answer, whatever its key (`data`, `issues`, `migrations`, …). */
const KEYS = ['data', 'items', 'issues', 'migrations'];
const list = (d: unknown): Rec[] => {
  if (Array.isArray(d)) return d as Rec[];
  const o = (d ?? {}) as Record<string, unknown>;
  return (KEYS.map((k) => o[k]).find(Array.isArray) ?? []) as Rec[];
};

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
    void act.run(async () =>
      setResult(
        await api('/api/database/migrations/dry-run', {
          method: 'POST',
          body: { sql: String(f.get('sql')), ...(version ? { version } : {}) },
        }),
      ),
    );
  };
  return (
    <form class="stack" aria-label="Check a migration" onSubmit={submit}>
      <h2>Check a migration (dry run, drift)</h2>
      <label for="mig-version">Version (to compare with the applied one)</label>
      <input id="mig-version" name="version" />
      <label for="mig-sql">SQL</label>
      <textarea id="mig-sql" name="sql" class="mono" rows={4} required spellcheck={false} />
      <div class="actions">
        <button type="submit" disabled={act.busy}>
          Check
        </button>
      </div>
      <ErrorBox error={act.error} />
      {result && (
        <p role="status">
          Risk {result.riskLevel}
          {result.status
            ? `; ${result.status === 'drift' ? 'drift: the applied migration of this version had other SQL' : result.status}`
            : ''}
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
            {
              key: 'risk',
              label: 'Risk',
              cell: (r) => `${r.riskLevel}${r.reasons.length ? `: ${r.reasons.join('; ')}` : ''}`,
            },
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
      <PageHeader
        title="Migrations"
        description="The migrations applied to this database, and a dry run of a new one: its risk, statement by statement, before you apply it."
      />
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
                {
                  key: 'checksum',
                  label: 'Checksum',
                  cell: (r) => <code>{String(r.checksum ?? '').slice(0, 12)}</code>,
                },
                {
                  key: 'appliedAt',
                  label: 'Applied',
                  cell: (r) => (r.appliedAt ? new Date(String(r.appliedAt)).toLocaleString() : ''),
                },
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
      <PageHeader
        title="Advisor"
        description="Security and performance checks of this database, each with why it matters and the SQL that fixes it."
        actions={
          !error && (
            <Button
              icon={RefreshCw}
              disabled={act.busy}
              onClick={() => void act.run(() => api('/api/advisor/scan', { method: 'POST' }).then(reload))}
            >
              Scan now
            </Button>
          )
        }
      />
      <LoadState error={error ?? act.error} what="The advisor" endpoint="GET /api/advisor/issues">
        {data !== null && (
          <Grid<Rec>
            label="Findings"
            rows={list(data)}
            rowKey={(r, i) => String(r.key ?? i)}
            empty="No findings: nothing to fix."
            columns={[
              {
                key: 'severity',
                label: 'Severity',
                cell: (r) => <span class={r.severity === 'info' ? 'badge' : 'badge bad'}>{cellText(r.severity)}</span>,
              },
              { key: 'title', label: 'Finding', cell: (r) => cellText(r.title) },
              {
                key: 'object',
                label: 'Object',
                cell: (r) => cellText((r.object as { name?: string } | undefined)?.name ?? ''),
              },
              { key: 'why', label: 'Why it matters', cell: (r) => cellText(r.why ?? '') },
            ]}
            actions={(r) =>
              typeof r.fixSql === 'string' ? (
                <button type="button" aria-label={`Fix ${String(r.key)}`} onClick={() => setFix(String(r.fixSql))}>
                  Fix
                </button>
              ) : null
            }
          />
        )}
      </LoadState>
      {fix && (
        <SqlConfirm
          title="Apply the fix"
          sql={fix}
          done="Fix applied; the advisor scans again."
          onClose={() => setFix(null)}
          onDone={() => (setFix(null), void api('/api/advisor/scan', { method: 'POST' }).then(reload, reload))}
        />
      )}
    </section>
  );
}
