// Schedules (issue 28's /api/schedules): list, create with a cron helper that shows the next
// runs (croner, in the schedule's time zone), run now, history, delete. "Not available on this
// server" on a 404.
import { Cron } from 'croner';
import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { Grid } from '../grid/grid';
import { Button, cellText, Confirm, EmptyState, ErrorBox, Modal, PageHeader, toast, useAction, useLoad } from '../ui';
import { LoadState } from './notavailable';
import { CalendarClock, Plus } from '../components/icons';

interface Schedule {
  id: string;
  name: string;
  cronSchedule: string;
  timezone?: string;
  enabled?: boolean;
  functionSlug?: string | null;
  functionUrl?: string | null;
  sql?: string | null;
}

const PRESETS: Array<[string, string]> = [
  ['every minute', '* * * * *'],
  ['every 15 minutes', '*/15 * * * *'],
  ['hourly', '0 * * * *'],
  ['daily at 03:00', '0 3 * * *'],
  ['Mondays at 09:00', '0 9 * * 1'],
];

/** The next runs of a cron expression, or why it is not one. */
export function nextRuns(expr: string, timezone: string, n = 5): { runs: string[]; error: string | null } {
  if (/^\d+ seconds?$/.test(expr.trim())) return { runs: [], error: null };
  try {
    const runs = new Cron(expr, { timezone: timezone || 'UTC' }).nextRuns(n);
    return {
      runs: runs.map((d) =>
        d.toLocaleString(undefined, { timeZone: timezone || 'UTC', dateStyle: 'medium', timeStyle: 'short' }),
      ),
      error: null,
    };
  } catch (e) {
    return { runs: [], error: (e as Error).message };
  }
}

function CreateSchedule({ onClose, onDone }: { onClose: () => void; onDone: () => void }) {
  const [f, setF] = useState({
    name: '',
    cronSchedule: '*/15 * * * *',
    timezone: 'UTC',
    target: 'functionSlug',
    value: '',
  });
  const act = useAction();
  const next = nextRuns(f.cronSchedule, f.timezone);
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = {
      name: f.name,
      cronSchedule: f.cronSchedule,
      timezone: f.timezone,
      enabled: true,
      [f.target]: f.value,
    };
    if (await act.run(() => api('/api/schedules', { method: 'POST', body }))) {
      toast(`Created the schedule ${f.name}: next run ${next.runs[0] ?? 'in a few seconds'}.`);
      onDone();
    }
  };
  return (
    <Modal title="New schedule" onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        <label for="s-name">Name</label>
        <input id="s-name" required value={f.name} onInput={(e) => setF({ ...f, name: e.currentTarget.value })} />
        <label for="s-cron">Cron expression</label>
        <input
          id="s-cron"
          required
          class="mono"
          value={f.cronSchedule}
          onInput={(e) => setF({ ...f, cronSchedule: e.currentTarget.value })}
          aria-describedby="s-next"
        />
        <div class="actions">
          {PRESETS.map(([label, expr]) => (
            <button key={expr} type="button" class="chip" onClick={() => setF({ ...f, cronSchedule: expr })}>
              {label}
            </button>
          ))}
        </div>
        <label for="s-tz">Time zone (IANA)</label>
        <input id="s-tz" value={f.timezone} onInput={(e) => setF({ ...f, timezone: e.currentTarget.value })} />
        <div id="s-next" role="status">
          {next.error ? (
            <span class="error">Not a cron expression: {next.error}</span>
          ) : next.runs.length ? (
            <>Next runs: {next.runs.join(' · ')}</>
          ) : (
            'Runs every few seconds.'
          )}
        </div>
        <label for="s-target">Runs</label>
        <select id="s-target" value={f.target} onChange={(e) => setF({ ...f, target: e.currentTarget.value })}>
          <option value="functionSlug">a function (slug)</option>
          <option value="functionUrl">an HTTP request (URL)</option>
          <option value="sql">a SQL statement</option>
        </select>
        <label for="s-value">
          {f.target === 'functionSlug' ? 'Function slug' : f.target === 'sql' ? 'SQL' : 'URL'}
        </label>
        <input id="s-value" required value={f.value} onInput={(e) => setF({ ...f, value: e.currentTarget.value })} />
        <ErrorBox error={act.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={act.busy || !!next.error}>
            Create schedule
          </button>
        </div>
      </form>
    </Modal>
  );
}

function Runs({ schedule, onClose }: { schedule: Schedule; onClose: () => void }) {
  const { data, error } = useLoad(() => api(`/api/schedules/${enc(schedule.id)}/runs`), [schedule.id]);
  const rows = (Array.isArray(data) ? data : ((data as { data?: unknown[] })?.data ?? [])) as Array<
    Record<string, unknown>
  >;
  return (
    <Modal title={`Runs of ${schedule.name}`} onClose={onClose}>
      <ErrorBox error={error} />
      <Grid<Record<string, unknown>>
        label="Runs"
        rows={rows}
        rowKey={(r, i) => String(r.id ?? i)}
        empty="No runs yet."
        columns={['startedAt', 'status', 'durationMs', 'error'].map((k) => ({
          key: k,
          label: k,
          cell: (r) => cellText(r[k] ?? ''),
        }))}
      />
    </Modal>
  );
}

export function Schedules() {
  const { data, error, reload } = useLoad(() => api<Schedule[] | { data: Schedule[] }>('/api/schedules'), []);
  const [creating, setCreating] = useState(false);
  const [runs, setRuns] = useState<Schedule | null>(null);
  const [deleting, setDeleting] = useState<Schedule | null>(null);
  const act = useAction();
  const list = Array.isArray(data) ? data : (data?.data ?? []);
  return (
    <section class="stack">
      <PageHeader
        title="Schedules"
        description="Run a function, call a URL or run SQL on a cron schedule, in the time zone you choose."
        actions={
          !error && (
            <Button variant="primary" icon={Plus} onClick={() => setCreating(true)}>
              New schedule
            </Button>
          )
        }
      />
      <LoadState error={error ?? act.error} what="Schedules" endpoint="GET /api/schedules">
        {data !== null && (
          <Grid
            label="Schedules"
            rows={list}
            rowKey={(s) => s.id}
            empty={
              <EmptyState
                icon={CalendarClock}
                title="No schedules yet"
                action={
                  <Button variant="primary" icon={Plus} onClick={() => setCreating(true)}>
                    Create a schedule
                  </Button>
                }
              >
                Clean up old rows every night, send a digest every Monday, or call a function every 15 minutes.
              </EmptyState>
            }
            columns={[
              { key: 'name', label: 'Name', cell: (s) => s.name },
              { key: 'cron', label: 'Cron', cell: (s) => <code>{s.cronSchedule}</code> },
              {
                key: 'next',
                label: 'Next run',
                cell: (s) => nextRuns(s.cronSchedule, s.timezone ?? 'UTC', 1).runs[0] ?? '',
              },
              { key: 'target', label: 'Runs', cell: (s) => s.functionSlug ?? s.functionUrl ?? s.sql ?? '' },
              { key: 'enabled', label: 'Enabled', cell: (s) => (s.enabled === false ? 'no' : 'yes') },
            ]}
            actions={(s) => (
              <>
                <button
                  type="button"
                  class="ghost"
                  aria-label={`Run now: ${s.name}`}
                  onClick={() =>
                    void act.run(async () => {
                      await api(`/api/schedules/${enc(s.id)}/run`, { method: 'POST' });
                      toast(`Started ${s.name}; its run is in History.`);
                    })
                  }
                >
                  Run now
                </button>
                <button type="button" class="ghost" aria-label={`History of ${s.name}`} onClick={() => setRuns(s)}>
                  History
                </button>
                <button
                  type="button"
                  class="ghost danger"
                  aria-label={`Delete schedule ${s.name}`}
                  onClick={() => setDeleting(s)}
                >
                  Delete
                </button>
              </>
            )}
          />
        )}
      </LoadState>
      {creating && <CreateSchedule onClose={() => setCreating(false)} onDone={() => (setCreating(false), reload())} />}
      {runs && <Runs schedule={runs} onClose={() => setRuns(null)} />}
      {deleting && (
        <Confirm
          what="schedule"
          name={deleting.name}
          onClose={() => setDeleting(null)}
          onConfirm={() => api(`/api/schedules/${enc(deleting.id)}`, { method: 'DELETE' }).then(reload)}
        />
      )}
    </section>
  );
}
