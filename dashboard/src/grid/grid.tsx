// The one grid of the dashboard: every table-like page renders its rows through it. Sticky
// header and actions column, column types in the headers, sorting, arrow-key moves between
// cells (Enter on a cell is the cell's own action, e.g. editing).
import type { ComponentChildren } from 'preact';

export interface GridColumn<R> {
  key: string;
  label: string;
  /** Shown under the name in the header (a column's type). */
  type?: string;
  cell: (row: R) => ComponentChildren;
  /** Class of the cell: `null` (muted italic), `json` (monospace), `num` (right-aligned). */
  cellClass?: (row: R) => string | undefined;
}

export interface GridProps<R> {
  label: string;
  columns: GridColumn<R>[];
  rows: R[];
  rowKey: (row: R, index: number) => string;
  /** The buttons of a row, in a column that stays visible when the grid scrolls sideways. */
  actions?: (row: R) => ComponentChildren;
  /** The sort of the grid as "column.asc|desc"; with onSort the headers are sort buttons. */
  order?: string | null;
  onSort?: (column: string) => void;
  empty?: ComponentChildren;
  /** Extra rows above the data rows (e.g. folders), spanning every column. */
  before?: ComponentChildren;
}

function sortOf(order: string | null | undefined, key: string): 'ascending' | 'descending' | undefined {
  return order === `${key}.asc` ? 'ascending' : order === `${key}.desc` ? 'descending' : undefined;
}

/** Arrow keys move focus to the neighbouring cell's first control (or the cell itself). */
function onArrow(e: KeyboardEvent) {
  const dir = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] }[e.key];
  const td = (e.target as HTMLElement).closest?.('td[data-c]') as HTMLElement | null;
  if (!dir || !td || (e.target as HTMLElement).matches('input, textarea, select')) return;
  const r = Number(td.parentElement!.dataset.r) + dir[0]!;
  const c = Number(td.dataset.c) + dir[1]!;
  const next = td.closest('tbody')!.querySelector<HTMLElement>(`tr[data-r="${r}"] > td[data-c="${c}"]`);
  if (!next) return;
  e.preventDefault();
  (next.querySelector<HTMLElement>('button, a, input') ?? next).focus();
}

export function Grid<R>(props: GridProps<R>) {
  const { columns, rows, order, onSort, actions } = props;
  const span = columns.length + (actions ? 1 : 0);
  return (
    <div class="grid-wrap" tabIndex={0} role="region" aria-label={props.label}>
      <table class="grid" onKeyDown={onArrow}>
        <thead>
          <tr>
            {columns.map((c) => {
              const s = sortOf(order, c.key);
              return (
                <th key={c.key} scope="col" aria-sort={s}>
                  {onSort ? (
                    <button type="button" class="sort" onClick={() => onSort(c.key)}>
                      {c.label} {s === 'ascending' ? '▲' : s === 'descending' ? '▼' : ''}
                    </button>
                  ) : (
                    c.label
                  )}
                  {c.type && <span class="type">{c.type}</span>}
                </th>
              );
            })}
            {actions && (
              <th scope="col" class="act">
                <span class="sr-only">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {props.before}
          {rows.length === 0 && props.empty && (
            <tr>
              <td colSpan={span} class="empty">
                {props.empty}
              </td>
            </tr>
          )}
          {rows.map((row, i) => (
            <tr key={props.rowKey(row, i)} data-r={i}>
              {columns.map((c, j) => (
                <td key={c.key} data-c={j} class={c.cellClass?.(row)}>
                  {c.cell(row)}
                </td>
              ))}
              {actions && (
                <td class="act">
                  <div class="acts">{actions(row)}</div>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A row of the grid's body spanning every column (folders, notes). */
export function SpanRow({ span, children }: { span: number; children: ComponentChildren }) {
  return (
    <tr>
      <td colSpan={span}>{children}</td>
    </tr>
  );
}
