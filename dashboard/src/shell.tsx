import type { FunctionComponent } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { link, usePath } from './router';
import { Tables } from './pages/tables';
import { TablePage } from './pages/table';
import { Sql } from './pages/sql';
import { Users } from './pages/users';
import { Storage } from './pages/storage';
import { Functions } from './pages/functions';
import { Ai } from './pages/ai';
import { Health } from './pages/health';

type Page = FunctionComponent<{ params: string[] }>;

const NAV: Array<{ path: string; label: string; page: Page }> = [
  { path: '/tables', label: 'Tables', page: Tables },
  { path: '/sql', label: 'SQL', page: Sql },
  { path: '/users', label: 'Users', page: Users },
  { path: '/storage', label: 'Storage', page: Storage },
  { path: '/functions', label: 'Functions', page: Functions },
  { path: '/ai', label: 'AI usage', page: Ai },
  { path: '/health', label: 'Health', page: Health },
];

function pageFor(path: string): { page: Page; params: string[]; section: string } {
  const [, section = 'tables', ...rest] = path.split('/');
  const params = rest.map(decodeURIComponent);
  if (section === 'tables' && params.length) return { page: TablePage, params, section };
  const hit = NAV.find((n) => n.path === '/' + section);
  return hit ? { page: hit.page, params, section } : { page: NotFound, params, section };
}

const NotFound: Page = () => (
  <section>
    <h1>Not found</h1>
    <p>
      No such page. <a {...link('/tables')}>Go to tables</a>.
    </p>
  </section>
);

/** The signed-in app: navigation and the page of the current path. */
export function Shell({ onSignOut }: { onSignOut: () => void }) {
  const path = usePath();
  const { page: Page, params, section } = pageFor(path);
  const main = useRef<HTMLElement>(null);
  useEffect(() => {
    document.title = `${NAV.find((n) => n.path === '/' + section)?.label ?? 'Plinth'} · Plinth dashboard`;
  }, [path]);
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Plinth</span>
        <nav aria-label="Sections">
          <ul>
            {NAV.map((n) => (
              <li key={n.path}>
                <a {...link(n.path)} aria-current={n.path === '/' + section ? 'page' : undefined}>
                  {n.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" class="ghost" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        <Page key={path} params={params} />
      </main>
    </div>
  );
}
