// What pages share: loading and action state, the error envelope, dialogs, the pager and the
// copy button, and (re-exported) the design system's components, so a page imports from one place.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from './api';
import { ConfirmDialog, Dialog } from './components/dialog';
import { Check, CircleAlert, Copy, Icon } from './components/icons';
import { toast } from './components/toast';

export { Button } from './components/button';
export { ConfirmDialog, Dialog } from './components/dialog';
export { EmptyState, PageSkeleton, Skeleton, SkeletonLines } from './components/feedback';
export { Field, Input, Select } from './components/field';
export { Badge, Card, LinkTabs, PageHeader } from './components/page';
export { toast, toastError } from './components/toast';

/** The envelope of a failed call, as the API wrote it. */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const e = error instanceof ApiError ? error : null;
  return (
    <div class="error" role="alert">
      <div class="row">
        <Icon icon={CircleAlert} />
        <strong>{e ? e.message : String((error as Error).message ?? error)}</strong>
        {e?.position && !e.message.includes(`line ${e.position.line}, column ${e.position.column}`) && (
          <span class="pos">
            (line {e.position.line}, column {e.position.column})
          </span>
        )}
      </div>
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
  return { data, error, reload, setData, loading: data === null && !error };
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

/** A modal dialog with a title and a close button. */
export function Modal(props: { title: string; onClose: () => void; children: ComponentChildren }) {
  return <Dialog {...props} />;
}

/** Asks before a destructive action: the user types the name to confirm; a toast says it is done. */
export function Confirm(props: { what: string; name: string; onConfirm: () => Promise<unknown>; onClose: () => void }) {
  const act = useAction();
  return (
    <ConfirmDialog
      title={`Delete ${props.what}`}
      confirmLabel="Delete"
      danger
      typeName={props.name}
      error={<ErrorBox error={act.error} />}
      onClose={props.onClose}
      onConfirm={async () => {
        if (await act.run(props.onConfirm)) {
          toast(`Deleted ${props.what} ${props.name}.`);
          props.onClose();
        }
      }}
    >
      This deletes {props.what} <strong>{props.name}</strong> and cannot be undone. Type its name to confirm.
    </ConfirmDialog>
  );
}

/** Previous/next over a total, `limit` at a time. */
export function Pager(props: {
  offset: number;
  limit: number;
  total: number;
  onOffset: (o: number) => void;
  noun?: string;
}) {
  const { offset, limit, total } = props;
  const end = Math.min(offset + limit, total);
  return (
    <nav class="pager" aria-label="Pages">
      <span aria-live="polite">
        {total === 0
          ? `No ${props.noun ?? 'rows'}`
          : `${offset + 1}–${end} of ${total}${props.noun ? ` ${props.noun}` : ''}`}
      </span>
      <button
        type="button"
        class="sm"
        disabled={offset === 0}
        onClick={() => props.onOffset(Math.max(0, offset - limit))}
      >
        ← Previous
      </button>
      <button type="button" class="sm" disabled={end >= total} onClick={() => props.onOffset(offset + limit)}>
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

/** Copies text, says so on the button for a moment and in a toast. */
export function CopyButton({ text, label, what, name }: { text: string; label: string; what?: string; name?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      aria-label={name}
      onClick={async () => {
        await navigator.clipboard?.writeText(text).catch(() => {});
        setDone(true);
        toast(what ? `${what} copied.` : 'Copied.');
        setTimeout(() => setDone(false), 1500);
      }}
    >
      <Icon icon={done ? Check : Copy} />
      {done ? 'Copied' : label}
    </button>
  );
}
