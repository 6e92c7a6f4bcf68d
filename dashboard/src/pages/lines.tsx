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
    4 + (span ? ((at![i]! - at![0]!) / span) * (w - 8) : (i * (w - 8)) / Math.max(1, xs.length - 1));
  const y = (v: number) => h - 1 - (v / max) * (h - 10);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div class="plot">
        {/* All zero: no top value (the scale's floor of 1 would read as a value). */}
        <YTicks top={series.some((s) => s.values.some((v) => v > 0)) ? format(max) : ''} bottom={format(0)} />
        <svg
          viewBox={`0 0 ${w} ${h}`}
          role="img"
          aria-label={`${title}: ${series.map((s) => `${s.name} up to ${format(Math.max(0, ...s.values))}`).join(', ')}`}
        >
          <line x1="0" y1={h - 0.5} x2={w} y2={h - 0.5} class="axis" />
          {series.map((s) => (
            <polyline
              key={s.name}
              class={`line ${s.cls}`}
              fill="none"
              points={s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ')}
            />
          ))}
        </svg>
        <XTicks
          ticks={
            xs.length > 1
              ? [
                  [xs[0]!, 0],
                  [xs.at(-1)!, 1],
                ]
              : xs.map((l) => [l, 0])
          }
        />
      </div>
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

/**
 * The value axis: its top and bottom values, in HTML beside the SVG so they keep the type
 * scale's size however far the chart is scaled down (text inside the SVG shrank to ~7 px).
 */
export function YTicks({ top, bottom }: { top: string; bottom: string }) {
  return (
    <div class="y-ticks tick" aria-hidden="true">
      <span>{top}</span>
      <span>{bottom}</span>
    </div>
  );
}

/** The time axis under the SVG: each label at a fraction (0 to 1) of its width, kept inside it at the ends. */
export function XTicks({ ticks }: { ticks: Array<[string, number]> }) {
  return (
    <div class="x-ticks tick" aria-hidden="true">
      {ticks.map(([label, at]) => (
        <span
          key={`${label}@${at}`}
          class={at < 0.08 ? 'start' : at > 0.92 ? 'end' : undefined}
          style={at > 0.92 ? { right: `${(1 - at) * 100}%` } : { left: `${at * 100}%` }}
        >
          {label}
        </span>
      ))}
    </div>
  );
}
