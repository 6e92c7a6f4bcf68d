// A cell of the rows grid, edited in place by its type: a boolean toggles in one click; text,
// numbers, dates and date-times edit in the cell; enums in a select; JSON and foreign keys in a
// popover. The whole cell is its edit button; a foreign key also links to the row it references.
import { useRef, useState } from 'preact/hooks';
import { api, enc } from '../api';
import { ArrowUpRight, Icon } from '../components/icons';
import { type Done, InputEditor, type Move, SelectEditor } from '../grid/editors';
import { cellTarget, nextCell } from '../grid/keys';
import { type Choice, FkEditor, JsonEditor } from '../grid/popovers';
import { link } from '../router';
import { cellText, toast, toastError } from '../ui';
import type { Column } from './table-types';

type Row = Record<string, unknown>;

export interface CellProps {
  table: string;
  col: Column;
  row: Row;
  pk: string;
  /** Labels of the enum types among the columns. */
  enums: Record<string, string[]>;
  onSaved: () => void;
}

/** Saves one column of one row (PATCH by primary key). */
export const saveCell = (table: string, pk: string, row: Row, column: string, value: unknown) =>
  api(`/api/database/records/${enc(table)}?${enc(pk)}=eq.${enc(String(row[pk]))}`, {
    method: 'PATCH',
    body: { [column]: value },
  });

/** Rows of the referenced table, searched by its first text column (or by its key). */
export async function searchReferenced(fk: NonNullable<Column['foreignKey']>, term: string): Promise<Choice[]> {
  const schema = await api<{ columns: Column[] }>(`/api/database/tables/${enc(fk.table)}/schema`);
  const label = schema.columns.find((c) => c.type === 'string')?.name;
  const q = term ? (label ? `&${enc(label)}=ilike.${enc(`%${term}%`)}` : `&${enc(fk.column)}=eq.${enc(term)}`) : '';
  const rows = await api<Row[]>(`/api/database/records/${enc(fk.table)}?limit=8${q}`);
  return rows.map((r) => ({ key: String(r[fk.column]), label: label ? String(r[label] ?? '') : '' }));
}

function Toggle({ col, v, onSet }: { col: Column; v: unknown; onSet: (next: boolean) => void }) {
  return (
    <button
      type="button"
      class="toggle"
      role="switch"
      aria-checked={v === true}
      aria-label={col.name}
      onClick={() => onSet(v !== true)}
    >
      <span class="track" />
      <span class={v === null ? 'muted' : undefined}>{v === null ? 'NULL' : String(v)}</span>
    </button>
  );
}

/** A value as the cell shows it: a time without its fraction of a second, the rest as text. */
const shown = (col: Column, v: unknown) =>
  col.type === 'datetime' && typeof v === 'string' ? v.replace('T', ' ').replace(/\.\d+/, '') : cellText(v);

export function Cell(props: CellProps) {
  const { col, row } = props;
  const [editing, setEditing] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  const v = row[col.name];
  const save = (value: unknown) =>
    saveCell(props.table, props.pk, row, col.name, value).then(() => {
      toast(`Saved ${col.name}.`);
      props.onSaved();
    }, toastError);
  // After an edit, focus goes back to this cell, or on to the next one (Tab).
  const done: Done = (change, move: Move) => {
    const td = box.current?.closest('td') as HTMLElement | null;
    setEditing(false);
    if (change) void save(change.value);
    requestAnimationFrame(() => {
      const target = td && (move ? nextCell(td, move === 'prev') : td);
      if (target) cellTarget(target).focus();
    });
  };
  const fk = col.foreignKey;
  if (editing) {
    const labels = props.enums[col.type];
    let editor = <InputEditor col={col} value={v} onDone={done} />;
    if (labels) editor = <SelectEditor col={col} value={v} labels={labels} onDone={done} />;
    else if (col.type === 'json') editor = <JsonEditor col={col} value={v} onDone={done} />;
    else if (fk)
      editor = <FkEditor col={col} table={fk.table} value={v} search={(t) => searchReferenced(fk, t)} onDone={done} />;
    return (
      <div class="cellbox" ref={box}>
        {col.type === 'json' || fk ? <span class="muted">{cellText(v)}</span> : null}
        {editor}
      </div>
    );
  }
  if (col.type === 'boolean') return <Toggle col={col} v={v} onSet={(next) => void save(next)} />;
  return (
    <div class="cellbox" ref={box}>
      <button
        type="button"
        class="cell"
        aria-label={`Edit ${col.name}: ${shown(col, v)}`}
        onClick={() => setEditing(true)}
      >
        {shown(col, v)}
      </button>
      {fk && v !== null && (
        <a
          class="fklink"
          {...link(`/tables/${enc(fk.table)}?${enc(fk.column)}=eq.${enc(String(v))}`)}
          aria-label={`Open the ${fk.table} row ${cellText(v)}`}
        >
          <Icon icon={ArrowUpRight} />
        </a>
      )}
    </div>
  );
}
