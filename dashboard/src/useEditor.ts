import { useEffect, useRef, useState } from 'preact/hooks';
import type { Editor } from './editor';

/** Mounts a CodeMirror editor (loaded on demand) into the returned ref. */
export function useEditor(
  opts: { doc: string; lang: 'sql' | 'typescript'; label: string; onRun?: () => void },
  deps: unknown[] = [],
) {
  const ref = useRef<HTMLDivElement>(null);
  const [editor, setEditor] = useState<Editor | null>(null);
  const runRef = useRef(opts.onRun);
  runRef.current = opts.onRun;
  useEffect(() => {
    let ed: Editor | null = null;
    let live = true;
    void import('./editor').then(({ createEditor }) => {
      if (!live || !ref.current) return;
      ed = createEditor({ ...opts, parent: ref.current, onRun: opts.onRun && (() => runRef.current?.()) });
      setEditor(ed);
    });
    return () => {
      live = false;
      ed?.destroy();
    };
  }, deps);
  return { ref, editor };
}
