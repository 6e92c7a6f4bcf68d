// Toasts: every action says what it did. `toast()` from anywhere; <Toaster/> (in the shell)
// shows them bottom right, in a polite live region, for a few seconds each (errors longer).
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api';
import { CircleAlert, CircleCheck, Icon, X } from './icons';

export interface Toast {
  id: number;
  kind: 'success' | 'error';
  message: string;
  detail?: string;
}

let toasts: Toast[] = [];
let next = 1;
const listeners = new Set<(t: Toast[]) => void>();
const emit = () => listeners.forEach((l) => l(toasts));

export function dismiss(id: number): void {
  toasts = toasts.filter((t) => t.id !== id);
  emit();
}

/** Shows a toast: a success by default, or what went wrong (the envelope's message and next step). */
export function toast(message: string, opts: { kind?: Toast['kind']; detail?: string } = {}): void {
  const t: Toast = { id: next++, kind: opts.kind ?? 'success', message, detail: opts.detail };
  toasts = [...toasts.slice(-3), t];
  emit();
  setTimeout(() => dismiss(t.id), t.kind === 'error' ? 9000 : 4500);
}

/** A failed action as a toast. */
export function toastError(e: unknown): void {
  if (e instanceof ApiError) toast(e.message, { kind: 'error', detail: e.nextActions || e.code });
  else toast(String((e as Error)?.message ?? e), { kind: 'error' });
}

export function Toaster() {
  const [list, setList] = useState(toasts);
  useEffect(() => {
    listeners.add(setList);
    return () => void listeners.delete(setList);
  }, []);
  return (
    <section aria-label="Notifications" aria-live="polite">
      <ol class="toasts">
        {list.map((t) => (
          <li key={t.id} class={`toast ${t.kind}`}>
            <Icon icon={t.kind === 'error' ? CircleAlert : CircleCheck} />
            <div class="text">
              {t.message}
              {t.detail && <small>{t.detail}</small>}
            </div>
            <button
              type="button"
              class="ghost icon-only sm"
              aria-label="Dismiss"
              title="Dismiss"
              onClick={() => dismiss(t.id)}
            >
              <Icon icon={X} />
            </button>
          </li>
        ))}
      </ol>
    </section>
  );
}
