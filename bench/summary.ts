// The one table `npm run bench` ends with: every ratio of issue #38, from the figures the
// benchmarks recorded (lib.ts `record`, one JSON line each) and, for the function cold start,
// the line bench/functions.ts prints. A row whose benchmark did not run shows "-".
import { readFileSync } from 'node:fs';

interface Rec {
  key: string;
  value: number;
}

interface Row {
  what: string;
  goal: string;
  show: (find: (re: RegExp) => number | undefined, out: string) => string;
}

const x = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '-' : `${v.toFixed(2)}×`);
const ms = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '-' : `${v.toFixed(0)} ms`);
const s = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '-' : `${(v / 1000).toFixed(2)} s`);

const ROWS: Row[] = [
  {
    what: '20-row read on /api/db, RLS owner = auth.uid(), 1,000 rows of the caller, c=16 ÷ bare node:http + pg',
    goal: '≥ 0.95×',
    show: (f) => x(f(/^Records on server Postgres.* :: \(a\)/)),
  },
  {
    what: 'the same on /api/database/records (sends the total) ÷ bare node:http + pg',
    goal: '',
    show: (f) => x(f(/^Records on server Postgres.* :: \(a2\)/)),
  },
  {
    what: 'GET /api/health ÷ bare node:http',
    goal: '≥ 0.85×',
    show: (f) => x(f(/^GET \/api\/health vs bare node:http.* :: health/)),
  },
  {
    what: 'GET /api/health, log store on ÷ off (cost of logging = 1 − ratio)',
    goal: '≥ 0.95×',
    show: (f) => x(f(/^Log store on .* :: GET \/api\/health/)),
  },
  {
    what: 'function warm throughput ÷ bare node:http relay to the same Deno, c=16',
    goal: '≥ 0.8×',
    show: (f) => x(f(/bare node:http relay to Deno\.serve.* :: warm invocation, c=16/)),
  },
  {
    what: 'function cold start (save + first call) p50',
    goal: '≤ 50 ms',
    show: (_f, out) => {
      const m = /save and first call of a new function \(spare process ready\): p50 ([\d.]+) ms/.exec(out);
      return m ? `${m[1]} ms` : '-';
    },
  },
  {
    what: 'realtime fan-out to 1,000 under RLS, p99 (bare socket.io p99)',
    goal: '≤ 100 ms and ≤ bare',
    show: (f) => `${ms(f(/^realtime\.fanout\.p99$/))} (${ms(f(/^realtime\.bare\.p99$/))})`,
  },
  {
    what: 'start to healthy, existing / fresh data dir',
    goal: '< 1.5 s / < 5 s',
    show: (f) => `${s(f(/^start\.existing$/))} / ${s(f(/^start\.fresh$/))}`,
  },
  {
    what: 'idle memory, whole tree (PSS; processes)',
    goal: '< 150 MiB',
    show: (f) => {
      const v = f(/^start\.idle\.pss$/);
      return v === undefined ? '-' : `${v.toFixed(0)} MiB (${f(/^start\.idle\.processes$/) ?? '?'})`;
    },
  },
  {
    what: '4 KiB PUT ÷ bare node + fs',
    goal: '≥ 0.5×',
    show: (f) => x(f(/^4 KiB objects \(default database\).* :: PUT/)),
  },
];

/** The summary table as Markdown, from the results file and the benchmarks' captured output. */
export function summary(resultsFile: string, output: string): string {
  let recs: Rec[] = [];
  try {
    recs = readFileSync(resultsFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Rec);
  } catch {
    /* nothing recorded */
  }
  // The last figure recorded under a matching key (a later run of the same case wins).
  const find = (re: RegExp) => recs.filter((r) => re.test(r.key)).at(-1)?.value;
  const lines = ['| what | now | goal |', '|---|---|---|'];
  for (const r of ROWS) lines.push(`| ${r.what} | ${r.show(find, output)} | ${r.goal} |`);
  return lines.join('\n');
}
