import { useState } from 'preact/hooks';
import { api } from '../api';
import { Sparkles } from '../components/icons';
import { aiStatus } from '../lib/ai-status';
import { Grid } from '../grid/grid';
import { Card, EmptyState, ErrorBox, PageHeader, SkeletonLines, useLoad } from '../ui';
import { XTicks, YTicks } from './lines';

interface Day {
  day: string;
  model: string;
  userId: string | null;
  email: string | null;
  caller: string;
  requests: number;
  totalTokens: number;
  images: number;
}

/** Series colours: classes c0…c5 (pages.css), from the theme's chart tokens. */
const colour = (j: number) => `c${j % 6}`;

/** Stacked bars: one bar per day, one colour per series; an SVG with a table beside it for screen readers. */
export function StackedBars(props: {
  title: string;
  days: string[];
  series: string[];
  value: (day: string, s: string) => number;
  tick?: (day: string) => string;
}) {
  const { days, series, value } = props;
  const totals = days.map((d) => series.reduce((n, s) => n + value(d, s), 0));
  const max = Math.max(1, ...totals);
  const w = 640;
  const h = 200;
  const bw = Math.max(4, Math.min(48, (w - 8) / Math.max(days.length, 1) - 6));
  // A label every few bars: at most 12, and at least 120 units apart (a time like "10:51 PM"
  // at the type scale) so neighbours never overlap however narrow the chart is drawn.
  const every = Math.max(Math.ceil(days.length / 12), Math.ceil(120 / (bw + 6)));
  const left = (i: number) => 4 + i * (bw + 6);
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div class="plot">
        <YTicks top={String(max)} bottom="0" />
        <svg
          viewBox={`0 0 ${w} ${h}`}
          role="img"
          aria-label={`${props.title}: ${days.map((d, i) => `${d} ${totals[i]}`).join(', ')}`}
        >
          <line x1="0" y1={h - 0.5} x2={w} y2={h - 0.5} class="axis" />
          {days.map((d, i) => {
            let y = h - 1;
            return (
              <g key={d}>
                {series.map((s, j) => {
                  const v = value(d, s);
                  const bh = (v / max) * (h - 10);
                  y -= bh;
                  return v ? (
                    <rect key={s} x={left(i)} y={y} width={bw} height={bh} class={colour(j)}>
                      <title>{`${d} · ${s}: ${v}`}</title>
                    </rect>
                  ) : null;
                })}
              </g>
            );
          })}
        </svg>
        <XTicks
          ticks={days
            .map((d, i): [string, number] => [props.tick ? props.tick(d) : d.slice(5), (left(i) + bw / 2) / w])
            .filter((_, i) => i % every === 0)}
        />
      </div>
      <ul class="legend">
        {series.map((s, j) => (
          <li key={s}>
            <span class={`swatch ${colour(j)}`} /> {s}
          </li>
        ))}
      </ul>
    </figure>
  );
}

/** Why there is nothing to chart: AI not configured (and how to configure it), or no calls yet. */
function NoCalls() {
  const status = useLoad(aiStatus, []);
  const st = status.data;
  if (st && !st.configured)
    return (
      <EmptyState icon={Sparkles} title="AI is not configured">
        <span role="status">
          {st.message} {st.nextActions} Calls made then are charted here.
        </span>
      </EmptyState>
    );
  return (
    <EmptyState icon={Sparkles} title="No AI calls in this period">
      Calls to /api/ai/* made with any key appear here, per day, model and user.
    </EmptyState>
  );
}

/** AI usage per day, model and user (the last N days). */
export function Ai() {
  const [days, setDays] = useState(30);
  const from = new Date(Date.now() - days * 86400_000).toISOString();
  const { data, error } = useLoad(
    () => api<{ days: Day[] }>(`/api/ai/usage/daily?from=${encodeURIComponent(from)}`),
    [days],
  );
  const rows = data?.days ?? [];
  const dayList = [...new Set(rows.map((r) => r.day))];
  const models = [...new Set(rows.map((r) => r.model))];
  const who = (r: Day) => r.email ?? (r.caller === 'user' ? 'deleted user' : r.caller);
  const users = [...new Set(rows.map(who))];
  const sum = (pick: (r: Day) => boolean, k: 'totalTokens' | 'requests') =>
    rows.filter(pick).reduce((n, r) => n + r[k], 0);
  return (
    <section class="stack loose">
      <PageHeader
        title="AI usage"
        description="Tokens and requests of the AI gateway (/api/ai), per day, model and user."
        actions={
          <div class="inline">
            <label for="ai-days">Period</label>
            <select id="ai-days" value={days} onChange={(e) => setDays(Number(e.currentTarget.value))}>
              <option value={7}>7 days</option>
              <option value={30}>30 days</option>
              <option value={90}>90 days</option>
            </select>
          </div>
        }
      />
      <ErrorBox error={error} />
      {!data && !error && <SkeletonLines lines={5} label="Loading AI usage" />}
      {data && rows.length === 0 && <NoCalls />}
      {rows.length > 0 && (
        <>
          <div class="two">
            <Card>
              <StackedBars
                title="Tokens per day, by model"
                days={dayList}
                series={models}
                value={(d, m) => sum((r) => r.day === d && r.model === m, 'totalTokens')}
              />
            </Card>
            <Card>
              <StackedBars
                title="Requests per day, by user"
                days={dayList}
                series={users}
                value={(d, u) => sum((r) => r.day === d && who(r) === u, 'requests')}
              />
            </Card>
          </div>
          <Grid
            label="Usage per day, model and user"
            rows={rows}
            rowKey={(_, i) => String(i)}
            columns={[
              { key: 'day', label: 'Day', cell: (r) => r.day },
              { key: 'model', label: 'Model', cell: (r) => r.model },
              { key: 'user', label: 'User', cell: (r) => who(r) },
              { key: 'requests', label: 'Requests', cell: (r) => r.requests, cellClass: () => 'num' },
              { key: 'tokens', label: 'Tokens', cell: (r) => r.totalTokens, cellClass: () => 'num' },
              { key: 'images', label: 'Images', cell: (r) => r.images, cellClass: () => 'num' },
            ]}
          />
        </>
      )}
    </section>
  );
}
