// The editors that need more room than a cell: JSON in a text area checked as you type, and a
// foreign key picked from the rows of the referenced table (searched as you type).
import { useEffect, useRef, useState } from 'preact/hooks';
import { type Done, type EditorColumn, type Move, useFocus, usePopover } from './editors';

function useFinish(onDone: Done) {
  const finished = useRef(false);
  return (change: { value: unknown } | null, move: Move) => {
    if (finished.current) return;
    finished.current = true;
    onDone(change, move);
  };
}

function parse(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  if (text.trim() === '' || text.trim() === 'NULL') return { ok: true, value: null };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

export function JsonEditor({ col, value, onDone }: { col: EditorColumn; value: unknown; onDone: Done }) {
  const initial = value === null || value === undefined ? '' : JSON.stringify(value, null, 2);
  const [text, setText] = useState(initial);
  const focus = useFocus<HTMLTextAreaElement>();
  const finish = useFinish(onDone);
  const pop = usePopover();
  const parsed = parse(text);
  const save = (move: Move) => parsed.ok && finish(text === initial ? null : { value: parsed.value }, move);
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === 'Escape') e.preventDefault(), e.stopPropagation(), finish(null, null);
    else if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) e.preventDefault(), save(null);
    else if (e.key === 'Tab') e.preventDefault(), save(e.shiftKey ? 'prev' : 'next');
  };
  return (
    <span ref={pop.marker}>
      <div
        class="cell-pop"
        style={pop.style}
        tabIndex={-1}
        onFocusOut={(e) => pop.onFocusOut(e, () => finish(null, null))}
      >
        <textarea
          aria-label={`New value of ${col.name}`}
          aria-describedby={`json-state-${col.name}`}
          aria-invalid={parsed.ok ? undefined : true}
          value={text}
          spellcheck={false}
          ref={focus}
          onInput={(e) => setText(e.currentTarget.value)}
          onKeyDown={onKeyDown}
        />
        <div class="footer">
          <span id={`json-state-${col.name}`} class={parsed.ok ? undefined : 'bad'} role="status">
            {parsed.ok ? (col.nullable ? 'Valid JSON (empty: NULL)' : 'Valid JSON') : `Not valid JSON: ${parsed.error}`}
          </span>
          <button type="button" class="ghost sm" onClick={() => finish(null, null)}>
            Cancel
          </button>
          <button type="button" class="primary sm" disabled={!parsed.ok} onClick={() => save(null)}>
            Save
          </button>
        </div>
      </div>
    </span>
  );
}

export interface Choice {
  key: string;
  label: string;
}

/** Picks the referenced row: ↑↓ and Enter, or a click; Enter with no match saves the typed key. */
export function FkEditor(props: {
  col: EditorColumn;
  table: string;
  value: unknown;
  search: (term: string) => Promise<Choice[]>;
  onDone: Done;
}) {
  const { col } = props;
  const [term, setTerm] = useState('');
  const [choices, setChoices] = useState<Choice[] | null>(null);
  const [active, setActive] = useState(0);
  const focus = useFocus<HTMLInputElement>();
  const finish = useFinish(props.onDone);
  const pop = usePopover();
  useEffect(() => {
    let live = true;
    const t = setTimeout(
      () =>
        props.search(term).then(
          (c) => live && (setChoices(c), setActive(0)),
          () => live && setChoices([]),
        ),
      term ? 150 : 0,
    );
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [term]);
  const pick = (key: string | null) => finish(key === String(props.value ?? '') ? null : { value: key }, null);
  const list = choices ?? [];
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === 'Escape') e.preventDefault(), e.stopPropagation(), finish(null, null);
    else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      if (list.length) setActive((i) => (i + (e.key === 'ArrowDown' ? 1 : list.length - 1)) % list.length);
    } else if (e.key === 'Enter') {
      e.preventDefault();
      const c = list[active];
      if (c) pick(c.key);
      else if (term.trim()) pick(term.trim());
    } else if (e.key === 'Tab') e.preventDefault(), finish(null, e.shiftKey ? 'prev' : 'next');
  };
  const id = `fk-${col.name}`;
  return (
    <span ref={pop.marker}>
      <div
        class="cell-pop"
        style={pop.style}
        tabIndex={-1}
        onFocusOut={(e) => pop.onFocusOut(e, () => finish(null, null))}
      >
        <input
          role="combobox"
          aria-expanded="true"
          aria-controls={`${id}-list`}
          aria-activedescendant={list[active] ? `${id}-${active}` : undefined}
          aria-label={`New value of ${col.name}`}
          placeholder={`Search ${props.table}`}
          value={term}
          ref={focus}
          onInput={(e) => setTerm(e.currentTarget.value)}
          onKeyDown={onKeyDown}
        />
        <div id={`${id}-list`} role="listbox" aria-label={`Rows of ${props.table}`} class="choices">
          {list.map((c, i) => (
            // The keys go through the combobox (aria-activedescendant); a click picks too.
            // biome-ignore lint/a11y/useKeyWithClickEvents: the combobox handles the keyboard for its options
            <div
              key={c.key}
              id={`${id}-${i}`}
              role="option"
              tabIndex={-1}
              aria-selected={i === active}
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => pick(c.key)}
            >
              <span>{c.label || c.key}</span>
              {c.label && <code>{c.key.slice(0, 8)}</code>}
            </div>
          ))}
        </div>
        {choices !== null && list.length === 0 && <p class="muted">No row matches.</p>}
        <div class="footer">
          <span>↑↓ Enter to pick, Esc to cancel</span>
          {col.nullable && (
            <button type="button" class="ghost sm" onClick={() => pick(null)}>
              Set NULL
            </button>
          )}
        </div>
      </div>
    </span>
  );
}
