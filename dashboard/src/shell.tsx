// The signed-in app: the sidebar (a drawer on a phone), the page of the current path (each its
// own lazy chunk), the command palette (Ctrl/Cmd-K) and the toasts. The URL is the state: the
// path picks the page, its query the page's own state.
import { useEffect, useState } from 'preact/hooks';
import { PageSkeleton } from './components/feedback';
import { Icon, Menu, Search } from './components/icons';
import { Logo } from './components/logo';
import { Toaster } from './components/toast';
import { type Loader, NAV, type Page, sectionOf } from './nav/pages';
import { Palette } from './nav/palette';
import { Sidebar } from './nav/sidebar';
import { link, usePath } from './router';

const TABLE: Loader = () => import('./pages/table').then((m) => m.TablePage);
const COLLAPSED = 'plinth.sidebar';

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
  if (section === 'tables' && params.length) return { load: TABLE, params, section: '/tables' };
  const hit = NAV.find((n) => n.path === `/${section}`);
  return { load: hit ? hit.load : async () => NotFound, params, section: `/${section}` };
}

/** Re-renders when the theme changes (the toggle, or the system's while it is followed). */
function useThemeChanges() {
  const [, setTick] = useState(0);
  useEffect(() => {
    const on = () => setTick((t) => t + 1);
    const mq = matchMedia('(prefers-color-scheme: dark)');
    window.addEventListener('plinth:theme', on);
    mq.addEventListener('change', on);
    return () => {
      window.removeEventListener('plinth:theme', on);
      mq.removeEventListener('change', on);
    };
  }, []);
}

/** Ctrl/Cmd-K opens (and closes) the palette from anywhere. */
function usePaletteKey(toggle: () => void) {
  useEffect(() => {
    const on = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        toggle();
      }
    };
    document.addEventListener('keydown', on);
    return () => document.removeEventListener('keydown', on);
  }, []);
}

function usePage(path: string, load: Loader, section: string) {
  const [loaded, setLoaded] = useState<{ path: string; Page: Page } | null>(null);
  useEffect(() => {
    document.title = `${sectionOf(section).item?.label ?? (section === '/tables' ? 'Tables' : 'Plinth')} · Plinth`;
    let live = true;
    void load().then((Page) => live && setLoaded({ path, Page }));
    return () => {
      live = false;
    };
  }, [path]);
  return loaded?.path === path ? loaded.Page : null;
}

export function Shell({ onSignOut }: { onSignOut: () => void }) {
  // The overview lives at /dashboard/overview: the bare /dashboard/ says so in the address bar.
  if (/^\/dashboard\/?$/.test(location.pathname))
    history.replaceState(null, '', `/dashboard/overview${location.search}`);
  const path = usePath();
  const { load, params, section } = pageFor(path);
  const Page = usePage(path, load, section);
  const [collapsed, setCollapsed] = useState(localStorage.getItem(COLLAPSED) === '1');
  const [drawer, setDrawer] = useState(false);
  const [palette, setPalette] = useState(false);
  useThemeChanges();
  usePaletteKey(() => setPalette((p) => !p));
  const collapse = () => {
    if (collapsed) localStorage.removeItem(COLLAPSED);
    else localStorage.setItem(COLLAPSED, '1');
    setCollapsed(!collapsed);
  };
  const cls = ['app', collapsed ? 'collapsed' : '', drawer ? 'drawer' : ''].filter(Boolean).join(' ');
  return (
    <div class={cls} onKeyDown={(e) => drawer && e.key === 'Escape' && setDrawer(false)}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="mobilebar">
        <button
          type="button"
          class="ghost icon-only"
          aria-label="Open the navigation"
          aria-expanded={drawer}
          onClick={() => setDrawer(true)}
        >
          <Icon icon={Menu} />
        </button>
        <a class="brand" {...link('/overview')}>
          <Logo /> Plinth
        </a>
        <button type="button" class="ghost icon-only" aria-label="Search" onClick={() => setPalette(true)}>
          <Icon icon={Search} />
        </button>
      </header>
      {drawer && (
        <button type="button" class="scrim" aria-label="Close the navigation" onClick={() => setDrawer(false)} />
      )}
      <Sidebar
        section={section}
        collapsed={collapsed}
        onCollapse={collapse}
        onSearch={() => setPalette(true)}
        onSignOut={onSignOut}
        onNavigate={() => setDrawer(false)}
      />
      <main id="main" tabIndex={-1}>
        {Page ? <Page key={path} params={params} /> : <PageSkeleton />}
      </main>
      <Toaster />
      {palette && <Palette onClose={() => setPalette(false)} onSignOut={onSignOut} />}
    </div>
  );
}
