// History and saved queries of the SQL editor, kept in this browser's localStorage.
import { useState } from 'preact/hooks';
import { PromptDialog } from '../components/dialog';

const HISTORY = 'plinth.sql.history';
const SAVED = 'plinth.sql.saved';

interface Saved {
  name: string;
  query: string;
}

const read = <T,>(k: string): T[] => {
  try {
    return JSON.parse(localStorage.getItem(k) ?? '[]') as T[];
  } catch {
    return [];
  }
};

/** Adds a query to the history (newest first, 30 kept, no repeats). */
export function remember(query: string) {
  const q = query.trim();
  if (!q) return;
  localStorage.setItem(HISTORY, JSON.stringify([q, ...read<string>(HISTORY).filter((x) => x !== q)].slice(0, 30)));
}

export function Library({ current, onOpen }: { current: () => string; onOpen: (q: string) => void }) {
  const [saved, setSaved] = useState(() => read<Saved>(SAVED));
  const [open, setOpen] = useState<'history' | 'saved' | null>(null);
  const history = open === 'history' ? read<string>(HISTORY) : [];
  const [naming, setNaming] = useState(false);
  const save = (name: string) => {
    setNaming(false);
    const next = [{ name, query: current() }, ...saved.filter((s) => s.name !== name)];
    localStorage.setItem(SAVED, JSON.stringify(next));
    setSaved(next);
  };
  const remove = (name: string) => {
    const next = saved.filter((s) => s.name !== name);
    localStorage.setItem(SAVED, JSON.stringify(next));
    setSaved(next);
  };
  return (
    <div class="stack">
      {naming && (
        <PromptDialog
          title="Save query"
          label="Name"
          initial={saved.find((s) => s.query === current())?.name}
          confirmLabel="Save"
          onSubmit={save}
          onClose={() => setNaming(false)}
        />
      )}
      <div class="row">
        <button type="button" onClick={() => setNaming(true)}>
          Save query
        </button>
        <button
          type="button"
          aria-expanded={open === 'saved'}
          onClick={() => setOpen(open === 'saved' ? null : 'saved')}
        >
          Saved ({saved.length})
        </button>
        <button
          type="button"
          aria-expanded={open === 'history'}
          onClick={() => setOpen(open === 'history' ? null : 'history')}
        >
          History
        </button>
      </div>
      {open === 'saved' && (
        <ul class="list" aria-label="Saved queries">
          {saved.length === 0 && <li class="muted">No saved queries yet.</li>}
          {saved.map((s) => (
            <li key={s.name} class="row">
              <button type="button" class="link" onClick={() => onOpen(s.query)}>
                {s.name}
              </button>
              <button
                type="button"
                class="ghost danger"
                aria-label={`Forget saved query ${s.name}`}
                onClick={() => remove(s.name)}
              >
                Forget
              </button>
            </li>
          ))}
        </ul>
      )}
      {open === 'history' && (
        <ul class="list" aria-label="History">
          {history.length === 0 && <li class="muted">Nothing run yet.</li>}
          {history.map((q, i) => (
            <li key={i}>
              <button type="button" class="link" onClick={() => onOpen(q)}>
                <code>{q.length > 120 ? `${q.slice(0, 120)}…` : q}</code>
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
