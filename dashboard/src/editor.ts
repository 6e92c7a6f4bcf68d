// CodeMirror 6, loaded only by the pages that edit code (a chunk of its own).
import { EditorView, basicSetup } from 'codemirror';
import { keymap } from '@codemirror/view';
import { Compartment, EditorSelection, Prec, type Extension } from '@codemirror/state';
import {
  acceptCompletion,
  autocompletion,
  closeCompletion,
  completeFromList,
  completionKeymap,
  completionStatus,
} from '@codemirror/autocomplete';
import { javascript } from '@codemirror/lang-javascript';
import { PostgreSQL, sql } from '@codemirror/lang-sql';
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { tags as t } from '@lezer/highlight';

// Colours from the theme's code tokens (tokens.css): at least 4.5:1 on the editor's background in
// light and dark, and on the active line (CodeMirror's defaults fall short).
const readable = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.moduleKeyword, t.operatorKeyword], color: 'var(--code-keyword)' },
  { tag: [t.string, t.special(t.string), t.regexp], color: 'var(--code-string)' },
  { tag: [t.number, t.bool, t.null, t.atom], color: 'var(--code-number)' },
  { tag: [t.comment, t.lineComment, t.blockComment], color: 'var(--code-comment)', fontStyle: 'italic' },
  { tag: [t.typeName, t.className, t.namespace], color: 'var(--code-type)' },
  {
    tag: [t.definition(t.variableName), t.function(t.variableName), t.function(t.propertyName)],
    color: 'var(--code-function)',
  },
  { tag: [t.variableName, t.propertyName, t.attributeName, t.labelName], color: 'var(--code-fg)' },
  { tag: [t.operator, t.punctuation, t.bracket, t.meta], color: 'var(--code-punct)' },
  { tag: t.invalid, color: 'var(--code-invalid)' },
]);

export interface Editor {
  value(): string;
  set(text: string): void;
  /** Puts the cursor at a 1-based line and column and focuses the editor. */
  goTo(line: number, column: number): void;
  /** Inserts text at the cursor (a name picked in the schema browser). */
  insert(text: string): void;
  /** The tables, columns and functions SQL completion offers. */
  setSchema(schema: SqlSchema): void;
  destroy(): void;
}

export interface SqlSchema {
  tables: Record<string, string[]>;
  functions: string[];
}

/** SQL with completion of this database's tables, columns and functions (and keywords). */
function sqlSupport(schema: SqlSchema): Extension {
  const fns = completeFromList(
    schema.functions.map((label) => ({ label, type: 'function', apply: `${label}()`, boost: 1 })),
  );
  return [
    sql({ dialect: PostgreSQL, schema: schema.tables, defaultSchema: 'public' }),
    PostgreSQL.language.data.of({ autocomplete: fns }),
  ];
}

// Enter never accepts a completion (it closes the popup and makes the new line): Tab does.
// The default completion keymap (Enter accepts) is turned off, not merely outranked: it sits
// at the same precedence, earlier in basicSetup, so it won whenever the popup had been open
// longer than its 75 ms interaction delay, i.e. for every person typing.
const completionKeys = [
  autocompletion({ defaultKeymap: false }),
  Prec.highest(
    keymap.of([
      ...completionKeymap.filter((b) => b.key !== 'Enter'),
      { key: 'Enter', run: (view) => (completionStatus(view.state) === 'active' && closeCompletion(view), false) },
      { key: 'Tab', run: acceptCompletion },
    ]),
  ),
];

export function createEditor(opts: {
  parent: HTMLElement;
  doc: string;
  lang: 'sql' | 'typescript';
  label: string;
  onRun?: () => void;
}): Editor {
  const run = opts.onRun;
  const language = new Compartment();
  const view = new EditorView({
    doc: opts.doc,
    parent: opts.parent,
    extensions: [
      basicSetup,
      language.of(opts.lang === 'sql' ? sqlSupport({ tables: {}, functions: [] }) : javascript({ typescript: true })),
      completionKeys,
      syntaxHighlighting(readable),
      // Long lines wrap: no sideways scrolling on a phone.
      EditorView.lineWrapping,
      EditorView.contentAttributes.of({ 'aria-label': opts.label }),
      // The server's CSP allows the editor's one <style> element by this page's nonce.
      EditorView.cspNonce.of(document.querySelector<HTMLMetaElement>('meta[name="csp-nonce"]')?.content ?? ''),
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
    insert: (text) => {
      view.dispatch(view.state.replaceSelection(text));
      view.focus();
    },
    setSchema: (schema) => view.dispatch({ effects: language.reconfigure(sqlSupport(schema)) }),
    destroy: () => view.destroy(),
  };
}
