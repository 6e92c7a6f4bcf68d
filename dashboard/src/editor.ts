// CodeMirror 6, loaded only by the pages that edit code (a chunk of its own).
import { EditorView, basicSetup } from 'codemirror';
import { keymap } from '@codemirror/view';
import { EditorSelection, Prec } from '@codemirror/state';
import { javascript } from '@codemirror/lang-javascript';
import { PostgreSQL, sql } from '@codemirror/lang-sql';

export interface Editor {
  value(): string;
  set(text: string): void;
  /** Puts the cursor at a 1-based line and column and focuses the editor. */
  goTo(line: number, column: number): void;
  destroy(): void;
}

export function createEditor(opts: { parent: HTMLElement; doc: string; lang: 'sql' | 'typescript'; label: string; onRun?: () => void }): Editor {
  const run = opts.onRun;
  const view = new EditorView({
    doc: opts.doc,
    parent: opts.parent,
    extensions: [
      basicSetup,
      opts.lang === 'sql' ? sql({ dialect: PostgreSQL }) : javascript({ typescript: true }),
      EditorView.contentAttributes.of({ 'aria-label': opts.label }),
      ...(run ? [Prec.highest(keymap.of([{ key: 'Mod-Enter', run: () => (run(), true) }]))] : []),
    ],
  });
  return {
    value: () => view.state.doc.toString(),
    set: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
    goTo(line, column) {
      const l = view.state.doc.line(Math.min(Math.max(line, 1), view.state.doc.lines));
      const pos = Math.min(l.from + Math.max(column - 1, 0), l.to);
      view.dispatch({ selection: EditorSelection.cursor(pos), scrollIntoView: true });
      view.focus();
    },
    destroy: () => view.destroy(),
  };
}
