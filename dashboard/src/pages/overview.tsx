// The home page: the server at a glance (health, database and storage size, tables, users,
// AI tokens per day) and the request charts once the server has /api/logs/stats.
import { api } from '../api';
import { runSql } from '../lib/sql';
import { link } from '../router';
import { ErrorBox, useLoad } from '../ui';
import { StackedBars } from './ai';
import { LoadState } from './notavailable';
import { bytes } from './tables';

function Card({ label, value, href }: { label: string; value: string; href?: string }) {
  return (
    <div class="card">
      <span class="big">{value}</span>
      {href ? <a {...link(href)}>{label}</a> : label}
    </div>
  );
}

interface Stat {
  minute: string;
  count: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
}

/** Lines over time: one polyline per series, a table of the values for screen readers. */
function Lines({ title, xs, series }: { title: string; xs: string[]; series: Array<{ name: string; values: number[]; cls: string }> }) {
  const w = 640;
  const h = 160;
  const max = Math.max(1, ...series.flatMap((s) => s.values));
  const x = (i: number) => 36 + (i * (w - 44)) / Math.max(1, xs.length - 1);
  const y = (v: number) => h - (v / max) * (h - 10);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${w} ${h + 24}`} role="img" aria-label={`${title}: ${series.map((s) => `${s.name} up to ${Math.max(0, ...s.values).toFixed(0)}`).join(', ')}`}>
        <line x1="30" y1={h} x2={w} y2={h} class="axis" />
        <text x="0" y="12" class="tick">{max.toFixed(0)}</text>
        <text x="0" y={h} class="tick">0</text>
        {xs.length > 0 && <text x="36" y={h + 16} class="tick">{xs[0]}</text>}
        {xs.length > 1 && <text x={w - 40} y={h + 16} class="tick">{xs.at(-1)}</text>}
        {series.map((s) => (
          <polyline key={s.name} class={`line ${s.cls}`} fill="none" points={s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ')} />
        ))}
      </svg>
      <ul class="legend">
        {series.map((s) => (
          <li key={s.name}>
            <span class={`swatch ${s.cls}`} /> {s.name}
          </li>
        ))}
      </ul>
    </figure>
  );
}

/** Requests, errors and latency per minute over every route (issue 27's /api/logs/stats). */
function Traffic({ stats }: { stats: Stat[] }) {
  const minutes = [...new Set(stats.map((s) => s.minute))].sort();
  const at = (m: string) => stats.filter((s) => s.minute === m);
  const sum = (m: string, k: 'count' | 'errors') => at(m).reduce((n, s) => n + Number(s[k]), 0);
  const p50 = (m: string) => {
    const rows = at(m);
    const n = rows.reduce((a, s) => a + Number(s.count), 0);
    return n ? rows.reduce((a, s) => a + Number(s.p50Ms) * Number(s.count), 0) / n : 0;
  };
  const p99 = (m: string) => Math.max(0, ...at(m).map((s) => Number(s.p99Ms)));
  const label = (m: string) => new Date(m).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  if (!minutes.length) return <p class="muted">No API requests in the last hour.</p>;
  return (
    <div class="two">
      <StackedBars title="Requests per minute (5xx in the second colour)" days={minutes} series={['ok', '5xx']} tick={label} value={(m, s) => (s === 'ok' ? sum(m, 'count') - sum(m, 'errors') : sum(m, 'errors'))} />
      <Lines title="Latency per minute, ms" xs={minutes.map(label)} series={[{ name: 'p50 (weighted)', values: minutes.map(p50), cls: 's0' }, { name: 'p99 (worst route)', values: minutes.map(p99), cls: 's1' }]} />
    </div>
  );
}

export function Overview() {
  const stats = useLoad(async () => {
    const [db, users, health] = await Promise.all([
      runSql<{ db: string; tables: string; storage: string; objects: string }>(
        `select pg_database_size(current_database())::bigint as db,
          (select count(*) from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public' and c.relkind in ('r', 'p'))::bigint as tables,
          (select coalesce(sum(size), 0) from storage.objects)::bigint as storage, (select count(*) from storage.objects)::bigint as objects`,
      ),
      api<{ pagination: { total: number } }>('/api/auth/users?limit=1'),
      fetch('/api/health?checks=true').then((r) => r.json() as Promise<{ status: string }>),
    ]);
    const r = db.rows[0]!;
    return { db: Number(r.db), tables: Number(r.tables), storage: Number(r.storage), objects: Number(r.objects), users: users.pagination.total, health: health.status };
  }, []);
  const from = new Date(Date.now() - 14 * 86400_000).toISOString();
  const ai = useLoad(() => api<{ days: Array<{ day: string; model: string; totalTokens: number }> }>(`/api/ai/usage/daily?from=${encodeURIComponent(from)}`), []);
  const traffic = useLoad(() => api<{ stats: Stat[] }>('/api/logs/stats'), []);
  const s = stats.data;
  const days = [...new Set(ai.data?.days.map((d) => d.day) ?? [])];
  const models = [...new Set(ai.data?.days.map((d) => d.model) ?? [])];
  return (
    <section class="stack">
      <h1>Overview</h1>
      <ErrorBox error={stats.error} />
      {s && (
        <div class="cards">
          <Card label="Health" value={s.health} href="/health" />
          <Card label="Database size" value={bytes(s.db)} />
          <Card label="Tables" value={String(s.tables)} href="/tables" />
          <Card label="Users" value={String(s.users)} href="/users" />
          <Card label={`Storage (${s.objects} objects)`} value={bytes(s.storage)} href="/storage" />
        </div>
      )}
      <h2>Requests, errors and latency</h2>
      <LoadState error={traffic.error} what="Request charts" endpoint="GET /api/logs/stats">
        {traffic.data && <Traffic stats={traffic.data.stats} />}
      </LoadState>
      <h2>AI tokens, last 14 days</h2>
      <ErrorBox error={ai.error} />
      {ai.data && days.length === 0 && <p class="muted">No AI calls in the last 14 days.</p>}
      {days.length > 0 && (
        <StackedBars title="AI tokens per day, by model" days={days} series={models} value={(d, m) => (ai.data?.days ?? []).filter((x) => x.day === d && x.model === m).reduce((n, x) => n + x.totalTokens, 0)} />
      )}
    </section>
  );
}
