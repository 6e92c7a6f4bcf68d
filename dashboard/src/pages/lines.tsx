// Lines over time, the chart of the overview's request latency and usage history.

export interface Series {
  name: string;
  values: number[];
  /** The colour class (s0, s1 in style.css). */
  cls: string;
}

/**
 * One polyline per series over `xs` (the first and last are printed under the axis); `at`
 * places the points by time instead of evenly; `format` writes the values (ticks and label).
 * The SVG is an image whose name says each series' peak, for screen readers.
 */
export function Lines(props: {
  title: string;
  xs: string[];
  series: Series[];
  at?: number[];
  format?: (v: number) => string;
}) {
  const { title, xs, series, at } = props;
  const format = props.format ?? ((v: number) => v.toFixed(0));
  const w = 640;
  const h = 160;
  const max = Math.max(1, ...series.flatMap((s) => s.values));
  const span = at && at.length > 1 ? at.at(-1)! - at[0]! : 0;
  const x = (i: number) =>
    36 + (span ? ((at![i]! - at![0]!) / span) * (w - 44) : (i * (w - 44)) / Math.max(1, xs.length - 1));
  const y = (v: number) => h - (v / max) * (h - 10);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <svg
        viewBox={`0 0 ${w} ${h + 24}`}
        role="img"
        aria-label={`${title}: ${series.map((s) => `${s.name} up to ${format(Math.max(0, ...s.values))}`).join(', ')}`}
      >
        <line x1="30" y1={h} x2={w} y2={h} class="axis" />
        <text x="0" y="12" class="tick">
          {format(max)}
        </text>
        <text x="0" y={h} class="tick">
          0
        </text>
        {xs.length > 0 && (
          <text x="36" y={h + 16} class="tick">
            {xs[0]}
          </text>
        )}
        {xs.length > 1 && (
          <text x={w - 4} y={h + 16} text-anchor="end" class="tick">
            {xs.at(-1)}
          </text>
        )}
        {series.map((s) => (
          <polyline
            key={s.name}
            class={`line ${s.cls}`}
            fill="none"
            points={s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ')}
          />
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
