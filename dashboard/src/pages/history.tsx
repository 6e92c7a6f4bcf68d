// Usage over time on the overview (GET /api/metrics/history): database and storage size,
// function calls and errors, AI tokens, over a range the admin picks.
import { useState } from 'preact/hooks';
import { api } from '../api';
import { Card, SkeletonLines, useLoad } from '../ui';
import { Lines } from './lines';
import { LoadState } from './notavailable';
import { bytes } from './tables';

interface Sample {
  at: string;
  databaseBytes: number;
  storageBytes: number;
  functionCalls: number | null;
  functionErrors: number | null;
  aiTokens: number;
}
interface History {
  samples: Sample[];
  intervalSeconds: number;
  stepSeconds: number;
}

const RANGES = { '1h': 'Last hour', '24h': 'Last 24 hours', '7d': 'Last 7 days', '30d': 'Last 30 days' } as const;
type Range = keyof typeof RANGES;

/** 300 → "5 min", 3600 → "1 h", 5 → "5 s". */
function duration(s: number): string {
  return s % 3600 === 0 ? `${s / 3600} h` : s % 60 === 0 ? `${s / 60} min` : `${s} s`;
}

const time = (at: string, range: Range) =>
  new Date(at).toLocaleString(
    undefined,
    range === '1h' || range === '24h'
      ? { hour: '2-digit', minute: '2-digit' }
      : { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' },
  );

/** The four charts once there are two points; before that, when the first sample was taken and the next is due. */
function Charts({ h, range }: { h: History; range: Range }) {
  const s = h.samples;
  if (s.length < 2) {
    const first = s[0] ? `the first sample is at ${time(s[0].at, '30d')}` : 'no sample has been taken yet';
    return (
      <p class="muted" role="status">
        Collecting usage over time: {first}. One is taken every {duration(h.intervalSeconds)}; the charts appear with
        the second.
      </p>
    );
  }
  const xs = s.map((p) => time(p.at, range));
  const at = s.map((p) => Date.parse(p.at));
  const per = `per ${duration(h.stepSeconds)}`;
  const counted = s.some((p) => p.functionCalls !== null);
  return (
    <div class="two">
      <Lines
        title="Database size"
        xs={xs}
        at={at}
        format={bytes}
        series={[{ name: 'database', values: s.map((p) => p.databaseBytes), cls: 's0' }]}
      />
      <Lines
        title="Storage size"
        xs={xs}
        at={at}
        format={bytes}
        series={[{ name: 'stored objects', values: s.map((p) => p.storageBytes), cls: 's0' }]}
      />
      {counted ? (
        <Lines
          title={`Function calls ${per}`}
          xs={xs}
          at={at}
          series={[
            { name: 'calls', values: s.map((p) => p.functionCalls ?? 0), cls: 's0' },
            { name: 'errors', values: s.map((p) => p.functionErrors ?? 0), cls: 's1' },
          ]}
        />
      ) : (
        <p class="muted">
          Function calls are counted from the log store, which is off on this server (LOGS_STORE=false).
        </p>
      )}
      <Lines
        title={`AI tokens ${per}`}
        xs={xs}
        at={at}
        series={[{ name: 'tokens', values: s.map((p) => p.aiTokens), cls: 's0' }]}
      />
    </div>
  );
}

/** The "Usage over time" section: a range picker and the charts of that range. */
export function UsageHistory() {
  const [range, setRange] = useState<Range>('24h');
  const history = useLoad(() => api<History>(`/api/metrics/history?range=${range}`), [range]);
  return (
    <Card
      title="Usage over time"
      label="Usage over time"
      actions={
        <div class="inline">
          <label for="usage-range">Range</label>
          <select id="usage-range" value={range} onChange={(e) => setRange(e.currentTarget.value as Range)}>
            {Object.entries(RANGES).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
      }
    >
      <LoadState error={history.error} what="Usage over time" endpoint="GET /api/metrics/history">
        {history.data ? (
          <Charts h={history.data} range={range} />
        ) : (
          !history.error && <SkeletonLines lines={4} label="Loading usage over time" />
        )}
      </LoadState>
    </Card>
  );
}
