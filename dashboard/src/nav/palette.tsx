// The command palette (Ctrl/Cmd-K): jump to any page, table, function, bucket or user by typing,
// or run a common action. Tables, functions and buckets load when it opens; users are searched
// by email as you type.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, enc } from '../api';
import {
  CornerDownLeft,
  FolderOpen,
  Icon,
  type IconNode,
  LogOut,
  Mail,
  Moon,
  Plus,
  Search,
  SquareFunction,
  SquareTerminal,
  Table2,
  UserPlus,
  Users,
} from '../components/icons';
import { navigate } from '../router';
import { setTheme, toggleTheme } from '../theme';
import { NAV } from './pages';

export interface Command {
  id: string;
  group: 'Actions' | 'Pages' | 'Tables' | 'Functions' | 'Buckets' | 'Users';
  label: string;
  icon: IconNode;
  hint?: string;
  keywords?: string;
  run: () => void;
}

const go = (path: string) => () => navigate(path);

function actions(signOut: () => void): Command[] {
  const a = (id: string, label: string, icon: IconNode, run: () => void, keywords?: string): Command => ({
    id: `action:${id}`,
    group: 'Actions',
    label,
    icon,
    run,
    keywords,
  });
  return [
    a('new-table', 'New table', Plus, go('/tables?new=1'), 'create table'),
    a('new-function', 'New function', Plus, go('/functions/new'), 'create function deploy'),
    a('open-sql', 'Open the SQL editor', SquareTerminal, go('/sql'), 'query run'),
    a('new-bucket', 'New bucket', Plus, go('/storage?new=1'), 'create bucket storage'),
    a('new-user', 'New user', UserPlus, go('/users?new=1'), 'create user invite'),
    a('failed-email', 'Failed email', Mail, go('/email?status=failed'), 'mail smtp resend undelivered'),
    a('test-email', 'Send a test email', Mail, go('/email?test=1'), 'mail smtp check'),
    a('theme', 'Toggle the dark theme', Moon, toggleTheme, 'light dark theme colour'),
    a('theme-system', 'Follow the system theme', Moon, () => setTheme('system'), 'light dark theme auto'),
    a('sign-out', 'Sign out', LogOut, signOut, 'log out'),
  ];
}

/** Tables, functions and buckets, loaded once per opening (each list on its own: one failing leaves the others). */
function useEntities(): Command[] {
  const [out, setOut] = useState<Command[]>([]);
  useEffect(() => {
    const lists: Array<Promise<Command[]>> = [
      api<string[]>('/api/database/tables').then((ts) =>
        ts.map(
          (t) =>
            ({
              id: `table:${t}`,
              group: 'Tables',
              label: t,
              icon: Table2,
              hint: 'table',
              run: go(`/tables/${enc(t)}`),
            }) as Command,
        ),
      ),
      api<Array<{ slug: string; name: string }>>('/api/functions').then((fs) =>
        fs.map(
          (f) =>
            ({
              id: `fn:${f.slug}`,
              group: 'Functions',
              label: f.name,
              keywords: f.slug,
              icon: SquareFunction,
              hint: `/functions/${f.slug}`,
              run: go(`/functions/${enc(f.slug)}`),
            }) as Command,
        ),
      ),
      api<{ buckets: string[] }>('/api/storage/buckets').then((r) =>
        r.buckets.map(
          (b) =>
            ({
              id: `bucket:${b}`,
              group: 'Buckets',
              label: b,
              icon: FolderOpen,
              hint: 'bucket',
              run: go(`/storage/${enc(b)}`),
            }) as Command,
        ),
      ),
    ];
    let live = true;
    for (const l of lists)
      l.then(
        (cs) => live && setOut((o) => [...o, ...cs]),
        () => {},
      );
    return () => {
      live = false;
    };
  }, []);
  return out;
}

/** Users whose email contains the text (two characters or more), a few at a time. */
function useUsers(q: string): Command[] {
  const [out, setOut] = useState<Command[]>([]);
  useEffect(() => {
    if (q.trim().length < 2) return setOut([]);
    let live = true;
    const t = setTimeout(() => {
      api<{ data: Array<{ id: string; email: string | null }> }>(
        `/api/auth/users?limit=5&search=${enc(q.trim())}`,
      ).then(
        (r) =>
          live &&
          setOut(
            r.data.map((u) => ({
              id: `user:${u.id}`,
              group: 'Users',
              label: u.email ?? u.id,
              icon: Users,
              hint: 'user',
              run: go(`/users?open=${enc(u.id)}`),
            })),
          ),
        () => {},
      );
    }, 150);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [q]);
  return out;
}

/** How well `q` matches: every word of the query in the text, earlier and at word starts better; 0 is no match. */
export function score(q: string, text: string): number {
  const t = text.toLowerCase();
  let total = 0;
  for (const w of q.toLowerCase().split(/\s+/).filter(Boolean)) {
    const i = t.indexOf(w);
    if (i < 0) return 0;
    total += 10 - Math.min(i, 8) + (i === 0 || /[\s/_-]/.test(t[i - 1] ?? '') ? 5 : 0);
  }
  return total || 1;
}

/** The text a command is matched on besides its label. */
const textOf = (c: Command) => `${c.label} ${c.keywords ?? ''} ${c.group} ${c.hint ?? ''}`;

export function Palette({ onClose, onSignOut }: { onClose: () => void; onSignOut: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [q, setQ] = useState('');
  const [active, setActive] = useState(0);
  const entities = useEntities();
  const users = useUsers(q);
  useEffect(() => ref.current?.showModal(), []);
  const pages: Command[] = NAV.map((n) => ({
    id: `page:${n.path}`,
    group: 'Pages',
    label: n.label,
    icon: n.icon,
    hint: 'page',
    keywords: n.keywords,
    run: go(n.path),
  }));
  const results = useMemo(() => {
    const all = [...actions(onSignOut), ...pages, ...entities, ...users];
    if (!q.trim()) return all.filter((c) => c.group === 'Actions' || c.group === 'Pages');
    return all
      .map((c) => ({ c, s: Math.max(2 * score(q, c.label), score(q, textOf(c)), c.group === 'Users' ? 1 : 0) }))
      .filter((x) => x.s > 0)
      .sort((a, b) => b.s - a.s)
      .slice(0, 40)
      .map((x) => x.c);
  }, [q, entities, users]);
  const pick = (c: Command | undefined) => {
    if (!c) return;
    onClose();
    c.run();
  };
  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const n = results.length;
      setActive((i) => (n ? (i + (e.key === 'ArrowDown' ? 1 : n - 1)) % n : 0));
    } else if (e.key === 'Enter') {
      e.preventDefault();
      pick(results[active]);
    }
  };
  const groups: Array<{ name: string; items: Array<{ c: Command; i: number }> }> = [];
  results.forEach((c, i) => {
    const g =
      groups.at(-1)?.name === c.group ? groups.at(-1)! : (groups.push({ name: c.group, items: [] }), groups.at(-1)!);
    g.items.push({ c, i });
  });
  return (
    <dialog ref={ref} class="palette" aria-label="Command palette" onClose={onClose} onCancel={onClose}>
      <div class="query">
        <Icon icon={Search} />
        <input
          role="combobox"
          aria-expanded="true"
          aria-controls="palette-list"
          aria-activedescendant={results[active] ? `cmd-${active}` : undefined}
          aria-label="Search pages, tables, functions, buckets, users and actions"
          placeholder="Search or jump to…"
          value={q}
          autoFocus
          onInput={(e) => (setQ(e.currentTarget.value), setActive(0))}
          onKeyDown={onKey}
        />
        <kbd>Esc</kbd>
      </div>
      <div id="palette-list" role="listbox" aria-label="Results">
        {groups.map((g) => (
          <div key={g.name} role="group" aria-labelledby={`grp-${g.name}`}>
            <div id={`grp-${g.name}`} class="group" role="presentation">
              {g.name}
            </div>
            {g.items.map(({ c, i }) => (
              // biome-ignore lint/a11y/useKeyWithClickEvents: the combobox handles the keyboard for its options (aria-activedescendant)
              <div
                key={c.id}
                id={`cmd-${i}`}
                role="option"
                tabIndex={-1}
                aria-selected={i === active}
                onMouseMove={() => i !== active && setActive(i)}
                onClick={() => pick(c)}
              >
                <Icon icon={c.icon} />
                <span>{c.label}</span>
                {c.hint && <span class="hint">{c.hint}</span>}
              </div>
            ))}
          </div>
        ))}
      </div>
      {results.length === 0 && (
        <p class="nothing" role="status">
          Nothing matches “{q}”.
        </p>
      )}
      <footer aria-hidden="true">
        <span>↑↓ to move</span>
        <span>
          <Icon icon={CornerDownLeft} /> to open
        </span>
        <span>Esc to close</span>
      </footer>
    </dialog>
  );
}
