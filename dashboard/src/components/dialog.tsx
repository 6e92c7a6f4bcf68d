// Dialogs of the design system, on the native <dialog> (focus trap, Escape closes): a modal
// dialog, a side panel (whole-row and user editing), and a confirmation.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { Icon, X } from './icons';

interface DialogProps {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  /** A side panel at the right edge instead of a centred dialog. */
  side?: boolean;
  /** The accessible name when it differs from the visible title. */
  label?: string;
  class?: string;
}

export function Dialog(props: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  const cls = [props.side ? 'side' : '', props.class ?? ''].filter(Boolean).join(' ') || undefined;
  return (
    <dialog
      ref={ref}
      class={cls}
      aria-label={props.label ?? props.title}
      onClose={props.onClose}
      onCancel={props.onClose}
    >
      <header>
        <h2>{props.title}</h2>
        <button type="button" class="ghost icon-only sm" aria-label="Close" title="Close" onClick={props.onClose}>
          <Icon icon={X} />
        </button>
      </header>
      <div class="body">{props.children}</div>
    </dialog>
  );
}

/** Asks before an action; with `typeName`, the user types that name first (destructive actions). */
export function ConfirmDialog(props: {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  typeName?: string;
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
  error?: ComponentChildren;
}) {
  const [typed, setTyped] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      await props.onConfirm();
    } finally {
      setBusy(false);
    }
  };
  const blocked = props.typeName !== undefined && typed !== props.typeName;
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      <form onSubmit={submit} class="stack">
        <div>{props.children}</div>
        {props.typeName !== undefined && (
          <div class="field">
            <label for="confirm-name">Name</label>
            <input
              id="confirm-name"
              value={typed}
              onInput={(e) => setTyped(e.currentTarget.value)}
              autocomplete="off"
            />
          </div>
        )}
        {props.error}
        <div class="footer">
          <button type="button" class="ghost" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" class={props.danger ? 'danger' : 'primary'} disabled={blocked || busy}>
            {props.confirmLabel}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** Asks for one value (a name, a type) in a dialog of the design system instead of the browser's prompt(). */
export function PromptDialog(props: {
  title: string;
  label: string;
  initial?: string;
  /** Values offered as the user types (a datalist); any other value is accepted too. */
  suggestions?: string[];
  confirmLabel: string;
  onSubmit: (value: string) => void;
  onClose: () => void;
}) {
  const [value, setValue] = useState(props.initial ?? '');
  const submit = (e: Event) => {
    e.preventDefault();
    const v = value.trim();
    if (v) props.onSubmit(v);
  };
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      <form onSubmit={submit} class="stack">
        <div class="field">
          <label for="prompt-value">{props.label}</label>
          <input
            id="prompt-value"
            value={value}
            list={props.suggestions ? 'prompt-suggestions' : undefined}
            onInput={(e) => setValue(e.currentTarget.value)}
            autocomplete="off"
            autofocus
          />
          {props.suggestions && (
            <datalist id="prompt-suggestions">
              {props.suggestions.map((s) => (
                <option key={s} value={s} />
              ))}
            </datalist>
          )}
        </div>
        <div class="footer">
          <button type="button" class="ghost" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={!value.trim()}>
            {props.confirmLabel}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
