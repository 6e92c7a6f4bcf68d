// The home page: the server at a glance (health, database and storage size, tables, users,
// AI tokens per day), the request charts once the server has /api/logs/stats, and usage over
// time (database and storage size, function calls, AI tokens) from /api/metrics/history.
import { api } from '../api';
import { runSql } from '../lib/sql';
import { link } from '../router';
import {
  Activity,
  Database,
  HardDrive,
  HeartPulse,
  Icon,
  type IconNode,
  Sparkles,
  Table2,
  Users,
} from '../components/icons';
import { Card, ErrorBox, PageHeader, Skeleton, useLoad } from '../ui';
import { GettingStarted } from './getting-started';
import { StackedBars } from './ai';
import { UsageHistory } from './history';
import { Lines } from './lines';
import { LoadState } from './notavailable';
import { bytes } from './tables';

/** One number of the project, linking to where it lives. */
function StatCard({
  label,
  value,
  href,
  icon,
  tone,
}: {
  label: string;
  value: string;
  href?: string;
  icon: IconNode;
  tone?: 'success' | 'danger';
}) {
  const body = (
    <>
      <span class="label">
        <Icon icon={icon} />
        {label}
      </span>
      <span class={tone ? `big ${tone}` : 'big'}>{value}</span>
    </>
  );
  return href ? (
    <a class="card stat" {...link(href)}>
      {body}
    </a>
  ) : (
    <div class="card stat">{body}</div>
  );
}

interface Stat {
  minute: string;
  count: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
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
      <StackedBars
        title="Requests per minute (5xx in the second colour)"
        days={minutes}
        series={['ok', '5xx']}
        tick={label}
        value={(m, s) => (s === 'ok' ? sum(m, 'count') - sum(m, 'errors') : sum(m, 'errors'))}
      />
      <Lines
        title="Latency per minute, ms"
        xs={minutes.map(label)}
        format={(v) => `${v.toFixed(0)} ms`}
        series={[
          { name: 'p50 (weighted)', values: minutes.map(p50), cls: 's0' },
          { name: 'p99 (worst route)', values: minutes.map(p99), cls: 's1' },
        ]}
      />
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
    return {
      db: Number(r.db),
      tables: Number(r.tables),
      storage: Number(r.storage),
      objects: Number(r.objects),
      users: users.pagination.total,
      health: health.status,
    };
  }, []);
  const from = new Date(Date.now() - 14 * 86400_000).toISOString();
  const ai = useLoad(
    () =>
      api<{ days: Array<{ day: string; model: string; totalTokens: number }> }>(
        `/api/ai/usage/daily?from=${encodeURIComponent(from)}`,
      ),
    [],
  );
  const traffic = useLoad(() => api<{ stats: Stat[] }>('/api/logs/stats'), []);
  const s = stats.data;
  const days = [...new Set(ai.data?.days.map((d) => d.day) ?? [])];
  const models = [...new Set(ai.data?.days.map((d) => d.model) ?? [])];
  return (
    <section class="stack loose">
      <PageHeader
        title="Overview"
        description={`This project at ${location.host}: its data, its traffic and what it used.`}
      />
      <ErrorBox error={stats.error} />
      {s && <GettingStarted counts={s} />}
      <div class="cards">
        {s ? (
          <>
            <StatCard
              icon={HeartPulse}
              label="Health"
              value={s.health === 'ok' ? 'Healthy' : s.health}
              href="/health"
              tone={s.health === 'ok' ? 'success' : 'danger'}
            />
            <StatCard icon={Database} label="Database size" value={bytes(s.db)} />
            <StatCard icon={Table2} label="Tables" value={String(s.tables)} href="/tables" />
            <StatCard icon={Users} label="Users" value={String(s.users)} href="/users" />
            <StatCard
              icon={HardDrive}
              label={`Storage (${s.objects} objects)`}
              value={bytes(s.storage)}
              href="/storage"
            />
          </>
        ) : (
          [0, 1, 2, 3, 4].map((i) => (
            <div key={i} class="card stat" aria-hidden="true">
              <Skeleton width="50%" />
              <Skeleton class="title" />
            </div>
          ))
        )}
      </div>
      <Card
        title="Requests, errors and latency"
        label="Requests, errors and latency"
        actions={<Icon icon={Activity} />}
      >
        <LoadState error={traffic.error} what="Request charts" endpoint="GET /api/logs/stats">
          {traffic.data && <Traffic stats={traffic.data.stats} />}
        </LoadState>
      </Card>
      <UsageHistory />
      <Card title="AI tokens, last 14 days" label="AI tokens" actions={<Icon icon={Sparkles} />}>
        <ErrorBox error={ai.error} />
        {ai.data && days.length === 0 && <p class="muted">No AI calls in the last 14 days.</p>}
        {days.length > 0 && (
          <StackedBars
            title="AI tokens per day, by model"
            days={days}
            series={models}
            value={(d, m) =>
              (ai.data?.days ?? []).filter((x) => x.day === d && x.model === m).reduce((n, x) => n + x.totalTokens, 0)
            }
          />
        )}
      </Card>
    </section>
  );
}
