import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';

/** The envelope of a failed call, as the API wrote it. */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const e = error instanceof ApiError ? error : null;
  return (
    <div class="error" role="alert">
      <strong>{e ? e.message : String((error as Error).message ?? error)}</strong>
      {e?.position && !e.message.includes(`line ${e.position.line}, column ${e.position.column}`) && (
        <span class="pos">
          {' '}
          (line {e.position.line}, column {e.position.column})
        </span>
      )}
      {e?.nextActions && <p>{e.nextActions}</p>}
      {e && <code class="code">{e.code}</code>}
    </div>
  );
}

/** Loads data with `load` (again when `deps` change or `reload` is called). */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setError(null);
    load().then(
      (d) => live && setData(d),
      (e) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, reload, setData };
}

/** Runs an action, keeping its error and busy state for the form that started it. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      return true;
    } catch (e) {
      setError(e);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, setError };
}

/** A modal dialog (the native <dialog>: focus trap, Escape closes). */
export function Modal(props: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  return (
    <dialog ref={ref} aria-label={props.title} onClose={props.onClose} onCancel={props.onClose}>
      <header class="row">
        <h2>{props.title}</h2>
        <button type="button" class="ghost" aria-label="Close" onClick={props.onClose}>
          ✕
        </button>
      </header>
      {props.children}
    </dialog>
  );
}

/** Asks before a destructive action: the user types the name to confirm. */
export function Confirm(props: { what: string; name: string; onConfirm: () => Promise<unknown>; onClose: () => void }) {
  const [typed, setTyped] = useState('');
  const act = useAction();
  return (
    <Modal title={`Delete ${props.what}`} onClose={props.onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (await act.run(props.onConfirm)) props.onClose();
        }}
      >
        <p>
          This deletes {props.what} <strong>{props.name}</strong> and cannot be undone. Type its name to confirm.
        </p>
        <label for="confirm-name">Name</label>
        <input id="confirm-name" value={typed} onInput={(e) => setTyped(e.currentTarget.value)} autocomplete="off" />
        <ErrorBox error={act.error} />
        <div class="actions">
          <button type="submit" class="danger" disabled={typed !== props.name || act.busy}>
            Delete
          </button>
          <button type="button" class="ghost" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}

/** Previous/next over a total, `limit` at a time. */
export function Pager(props: { offset: number; limit: number; total: number; onOffset: (o: number) => void; noun?: string }) {
  const { offset, limit, total } = props;
  const end = Math.min(offset + limit, total);
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={offset === 0} onClick={() => props.onOffset(Math.max(0, offset - limit))}>
        ← Previous
      </button>
      <span aria-live="polite">
        {total === 0 ? `No ${props.noun ?? 'rows'}` : `${offset + 1}–${end} of ${total}${props.noun ? ` ${props.noun}` : ''}`}
      </span>
      <button type="button" disabled={end >= total} onClick={() => props.onOffset(offset + limit)}>
        Next →
      </button>
    </nav>
  );
}

/** A value as a cell shows it: JSON pretty enough to read, null marked. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** Copies text and says so for a moment. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      onClick={async () => {
        await navigator.clipboard?.writeText(text).catch(() => {});
        setDone(true);
        setTimeout(() => setDone(false), 1500);
      }}
    >
      {done ? 'Copied' : label}
    </button>
  );
}

