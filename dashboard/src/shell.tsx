// The signed-in app: navigation and the page of the current path. Every page is its own lazy
// chunk, loaded when first visited.
import type { FunctionComponent } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { link, usePath } from './router';

type Page = FunctionComponent<{ params: string[] }>;
type Loader = () => Promise<Page>;

const NAV: Array<{ path: string; label: string; load: Loader }> = [
  { path: '/overview', label: 'Overview', load: () => import('./pages/overview').then((m) => m.Overview) },
  { path: '/tables', label: 'Tables', load: () => import('./pages/tables').then((m) => m.Tables) },
  { path: '/sql', label: 'SQL', load: () => import('./pages/sql').then((m) => m.Sql) },
  { path: '/users', label: 'Users', load: () => import('./pages/users').then((m) => m.Users) },
  { path: '/storage', label: 'Storage', load: () => import('./pages/storage').then((m) => m.Storage) },
  { path: '/functions', label: 'Functions', load: () => import('./pages/functions').then((m) => m.Functions) },
  { path: '/ai', label: 'AI usage', load: () => import('./pages/ai').then((m) => m.Ai) },
  { path: '/logs', label: 'Logs', load: () => import('./pages/logs').then((m) => m.Logs) },
  { path: '/schedules', label: 'Schedules', load: () => import('./pages/schedules').then((m) => m.Schedules) },
  { path: '/webhooks', label: 'Webhooks', load: () => import('./pages/webhooks').then((m) => m.Webhooks) },
  { path: '/migrations', label: 'Migrations', load: () => import('./pages/ops').then((m) => m.Migrations) },
  { path: '/advisor', label: 'Advisor', load: () => import('./pages/ops').then((m) => m.Advisor) },
  { path: '/backups', label: 'Backups', load: () => import('./pages/backups').then((m) => m.Backups) },
  { path: '/agents', label: 'Agents', load: () => import('./pages/agents').then((m) => m.Agents) },
  { path: '/settings', label: 'Settings', load: () => import('./pages/settings').then((m) => m.Settings) },
  { path: '/health', label: 'Health', load: () => import('./pages/health').then((m) => m.Health) },
];
const TABLE: Loader = () => import('./pages/table').then((m) => m.TablePage);

const NotFound: Page = () => (
  <section>
    <h1>Not found</h1>
    <p>
      No such page. <a {...link('/overview')}>Go to the overview</a>.
    </p>
  </section>
);

function pageFor(path: string): { load: Loader; params: string[]; section: string } {
  const [, section = 'overview', ...rest] = path.split('/');
  const params = rest.map(decodeURIComponent);
  if (section === 'tables' && params.length) return { load: TABLE, params, section };
  const hit = NAV.find((n) => n.path === '/' + section);
  return { load: hit ? hit.load : async () => NotFound, params, section };
}

export function Shell({ onSignOut }: { onSignOut: () => void }) {
  const path = usePath();
  const { load, params, section } = pageFor(path);
  const [loaded, setLoaded] = useState<{ path: string; Page: Page } | null>(null);
  const main = useRef<HTMLElement>(null);
  useEffect(() => {
    document.title = `${NAV.find((n) => n.path === '/' + section)?.label ?? 'Plinth'} · Plinth dashboard`;
    let live = true;
    void load().then((Page) => live && setLoaded({ path, Page }));
    return () => {
      live = false;
    };
  }, [path]);
  const Page = loaded?.path === path ? loaded.Page : null;
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
        {Page ? <Page key={path} params={params} /> : <p class="loading" role="status">Loading…</p>}
      </main>
    </div>
  );
}
