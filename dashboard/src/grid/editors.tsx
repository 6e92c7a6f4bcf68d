// In-place editors of a grid cell, by column type: an input (text, number, date, date-time), a
// select (enum), a JSON editor and a foreign-key picker (popovers over the cell). Enter (Ctrl/Cmd
// +Enter for JSON) saves, Tab and Shift+Tab save and move to the next or previous cell, Escape
// cancels; leaving an input saves it, leaving a popover cancels it.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { fromText, inputType, toText } from '../lib/values';

export type Move = 'next' | 'prev' | null;
/** The edit's outcome: the new value (or null: nothing to save) and where focus goes next. */
export type Done = (change: { value: unknown } | null, move: Move) => void;

export interface EditorColumn {
  name: string;
  type: string;
  nullable: boolean;
}

/** The typed value of an input's text: NULL is null; text columns keep the text as typed. */
export function typedValue(col: EditorColumn, text: string): unknown {
  if (text === 'NULL' || (text === '' && col.nullable && col.type !== 'string')) return null;
  return col.type === 'string' ? text : fromText(col, text);
}

const moveOf = (e: KeyboardEvent): Move => (e.shiftKey ? 'prev' : 'next');

/** Focuses the editor's field as it opens: the user asked to edit this cell. */
export function useFocus<T extends HTMLElement>() {
  const ref = useRef<T>(null);
  useEffect(() => ref.current?.focus(), []);
  return ref;
}

/** A text, number, date or date-time input in the cell. */
export function InputEditor({ col, value, onDone }: { col: EditorColumn; value: unknown; onDone: Done }) {
  const type = inputType(col.type);
  // NULL is typed as the word in a text input; a number or date input starts empty (empty is NULL).
  const initial = value === null ? (type === 'text' ? 'NULL' : '') : toText(col, value);
  const focus = useFocus<HTMLInputElement>();
  const finished = useRef(false);
  const [error, setError] = useState('');
  const finish = (text: string | null, move: Move) => {
    if (finished.current) return;
    try {
      const change = text === null || text === initial ? null : { value: typedValue(col, text) };
      finished.current = true;
      onDone(change, move);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const onKeyDown = (e: KeyboardEvent) => {
    const text = (e.currentTarget as HTMLInputElement).value;
    if (e.key === 'Escape') e.preventDefault(), e.stopPropagation(), finish(null, null);
    else if (e.key === 'Enter') e.preventDefault(), finish(text, null);
    else if (e.key === 'Tab') e.preventDefault(), finish(text, moveOf(e));
  };
  return (
    <input
      class="cell-input"
      name="v"
      type={type as 'text'}
      step={type === 'datetime-local' ? 1 : type === 'number' ? 'any' : undefined}
      aria-label={`New value of ${col.name}`}
      aria-invalid={error ? true : undefined}
      title={error || undefined}
      defaultValue={initial}
      ref={focus}
      onFocus={(e) => e.currentTarget.select?.()}
      onKeyDown={onKeyDown}
      onBlur={(e) => finish(e.currentTarget.value, null)}
    />
  );
}

/** An enum's labels in a select: choosing one saves it. */
export function SelectEditor({
  col,
  value,
  labels,
  onDone,
}: {
  col: EditorColumn;
  value: unknown;
  labels: string[];
  onDone: Done;
}) {
  const finished = useRef(false);
  const finish = (change: { value: unknown } | null, move: Move) => {
    if (finished.current) return;
    finished.current = true;
    onDone(change, move);
  };
  return (
    <select
      class="cell-input"
      aria-label={`New value of ${col.name}`}
      value={value === null ? '' : String(value)}
      ref={focus}
      onChange={(e) => finish({ value: e.currentTarget.value === '' ? null : e.currentTarget.value }, null)}
      onKeyDown={(e) => {
        if (e.key === 'Escape') e.preventDefault(), e.stopPropagation(), finish(null, null);
        else if (e.key === 'Tab') e.preventDefault(), finish(null, moveOf(e));
      }}
      onBlur={() => finish(null, null)}
    >
      {col.nullable && <option value="">NULL</option>}
      {labels.map((l) => (
        <option key={l}>{l}</option>
      ))}
    </select>
  );
}

/** Places a popover under the cell it edits (fixed: the grid's scrolling box does not clip it). */
export function usePopover() {
  const marker = useRef<HTMLSpanElement>(null);
  const [pos, setPos] = useState<{ top: string; left: string } | null>(null);
  useLayoutEffect(() => {
    const td = marker.current?.closest('td');
    if (!td) return;
    const r = td.getBoundingClientRect();
    const width = Math.min(384, window.innerWidth - 16);
    const left = Math.max(8, Math.min(r.left, window.innerWidth - width - 8));
    const below = r.bottom + 4;
    const top = below + 260 > window.innerHeight && r.top > 280 ? r.top - 264 : below;
    setPos({ top: `${Math.round(top)}px`, left: `${Math.round(left)}px` });
  }, []);
  /** Leaving the popover (focus moving outside it) cancels the edit. */
  const onFocusOut = (e: FocusEvent, cancel: () => void) => {
    const next = e.relatedTarget as Node | null;
    if (!next || !(e.currentTarget as HTMLElement).contains(next)) cancel();
  };
  return { marker, style: pos ?? { top: '-9999px', left: '0px' }, onFocusOut };
}
