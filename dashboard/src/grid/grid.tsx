// The one grid of the dashboard: every table-like page renders its rows through it. Sticky
// header, first column and actions column; column types in the headers; sorting; resizable
// columns (drag or arrow keys on the edge); row selection; arrow keys move between cells (Enter
// on a cell is the cell's own action, e.g. editing); skeleton rows while loading.
import type { ComponentChildren } from 'preact';
import { Skeleton } from '../components/feedback';
import { ArrowDown, ArrowUp, Icon } from '../components/icons';
import { onGridKey } from './keys';
import { ResizeHandle, useWidths } from './resize';

export interface GridColumn<R> {
  key: string;
  label: string;
  /** Shown under the name in the header (a column's type). */
  type?: string;
  cell: (row: R) => ComponentChildren;
  /** Class of the cell: `null` (muted italic), `json` (monospace), `num` (right-aligned), `nowrap`. */
  cellClass?: (row: R) => string | undefined;
}

export interface Selection<R> {
  selected: Set<string>;
  onChange: (s: Set<string>) => void;
  /** How a row is named in its checkbox's label. */
  name: (row: R) => string;
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
  /** Rows not there yet: skeleton rows instead of the empty state. */
  loading?: boolean;
  /** Checkboxes to select rows (the selection is the page's: it acts on it). */
  selection?: Selection<R>;
}

function sortOf(order: string | null | undefined, key: string): 'ascending' | 'descending' | undefined {
  return order === `${key}.asc` ? 'ascending' : order === `${key}.desc` ? 'descending' : undefined;
}

function Header<R>({
  c,
  order,
  onSort,
  width,
  setWidth,
}: {
  c: GridColumn<R>;
  order?: string | null;
  onSort?: (k: string) => void;
  width?: number;
  setWidth: (w: number) => void;
}) {
  const s = sortOf(order, c.key);
  return (
    <>
      <div class="head">
        {onSort ? (
          <button type="button" class="sort" onClick={() => onSort(c.key)}>
            {c.label}
            {s && <Icon icon={s === 'ascending' ? ArrowUp : ArrowDown} />}
          </button>
        ) : (
          c.label
        )}
      </div>
      {c.type && <span class="type">{c.type}</span>}
      <ResizeHandle label={c.label} width={width} onWidth={setWidth} />
    </>
  );
}

function SelectAll<R>({
  rows,
  rowKey,
  selection,
}: {
  rows: R[];
  rowKey: (r: R, i: number) => string;
  selection: Selection<R>;
}) {
  const keys = rows.map(rowKey);
  const all = keys.length > 0 && keys.every((k) => selection.selected.has(k));
  const some = !all && keys.some((k) => selection.selected.has(k));
  return (
    <input
      type="checkbox"
      aria-label="Select every row on this page"
      checked={all}
      ref={(el) => {
        if (el) el.indeterminate = some;
      }}
      onChange={() => selection.onChange(all ? new Set() : new Set(keys))}
    />
  );
}

export function Grid<R>(props: GridProps<R>) {
  const { columns, rows, order, onSort, actions, selection } = props;
  const [widths, setWidth] = useWidths(props.label);
  const span = columns.length + (actions ? 1 : 0) + (selection ? 1 : 0);
  const sized = (key: string) =>
    widths[key] ? { width: `${widths[key]}px`, minWidth: `${widths[key]}px`, maxWidth: `${widths[key]}px` } : undefined;
  const toggle = (k: string) => {
    const next = new Set(selection!.selected);
    if (next.has(k)) next.delete(k);
    else next.add(k);
    selection!.onChange(next);
  };
  return (
    <div class="grid-wrap" tabIndex={0} role="region" aria-label={props.label} aria-busy={props.loading || undefined}>
      <table class={selection ? 'grid selectable' : 'grid'} onKeyDown={onGridKey}>
        <thead>
          <tr>
            {selection && (
              <th scope="col" class="pick">
                <SelectAll rows={rows} rowKey={props.rowKey} selection={selection} />
              </th>
            )}
            {columns.map((c, j) => (
              <th
                key={c.key}
                scope="col"
                class={j === 0 ? 'first' : undefined}
                aria-sort={sortOf(order, c.key)}
                style={sized(c.key)}
              >
                <Header
                  c={c}
                  order={order}
                  onSort={onSort}
                  width={widths[c.key]}
                  setWidth={(w) => setWidth(c.key, w)}
                />
              </th>
            ))}
            {actions && (
              <th scope="col" class="act">
                <span class="sr-only">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {props.before}
          {props.loading &&
            rows.length === 0 &&
            [0, 1, 2, 3, 4].map((i) => (
              <tr key={`sk-${i}`}>
                {Array.from({ length: span }, (_, j) => (
                  <td key={j}>
                    <Skeleton />
                  </td>
                ))}
              </tr>
            ))}
          {!props.loading && rows.length === 0 && props.empty && (
            <tr>
              <td colSpan={span} class="empty">
                {props.empty}
              </td>
            </tr>
          )}
          {rows.map((row, i) => {
            const k = props.rowKey(row, i);
            const on = selection?.selected.has(k) ?? false;
            return (
              <tr key={k} data-r={i} class={on ? 'selected' : undefined}>
                {selection && (
                  <td class="pick">
                    <input
                      type="checkbox"
                      aria-label={`Select ${selection.name(row)}`}
                      checked={on}
                      onChange={() => toggle(k)}
                    />
                  </td>
                )}
                {columns.map((c, j) => {
                  const cls = [j === 0 ? 'first' : '', c.cellClass?.(row) ?? ''].filter(Boolean).join(' ');
                  return (
                    <td key={c.key} data-c={j} class={cls || undefined} style={sized(c.key)}>
                      {c.cell(row)}
                    </td>
                  );
                })}
                {actions && (
                  <td class="act">
                    <div class="acts">{actions(row)}</div>
                  </td>
                )}
              </tr>
            );
          })}
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
