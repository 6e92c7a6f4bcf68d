// The sidebar: the brand, search (the command palette), the pages grouped by what people do, and
// the theme, collapse and sign-out buttons. Collapsed it shows icons only (remembered); on a
// phone it is a drawer opened from the top bar.
import { Logo } from '../components/logo';
import { Icon, LogOut, Moon, PanelLeftClose, PanelLeftOpen, Search, Sun } from '../components/icons';
import { link } from '../router';
import { effectiveTheme, toggleTheme } from '../theme';
import { GROUPS } from './pages';

export const isMac = () => /Mac|iPhone|iPad/.test(navigator.platform);

export function Sidebar(props: {
  section: string;
  collapsed: boolean;
  onCollapse: () => void;
  onSearch: () => void;
  onSignOut: () => void;
  onNavigate: () => void;
}) {
  const dark = effectiveTheme() === 'dark';
  const home = link('/overview');
  return (
    <aside class="sidebar" aria-label="Sidebar">
      <a class="brand" href={home.href} onClick={(e) => (home.onClick(e), props.onNavigate())}>
        <Logo />
        <span class="text name" title={location.host}>
          Plinth
        </span>
      </a>
      <button type="button" class="search" onClick={props.onSearch} title="Search (Ctrl K)">
        <Icon icon={Search} />
        <span class="label">Search…</span>
        <kbd>{isMac() ? '⌘K' : 'Ctrl K'}</kbd>
      </button>
      <nav aria-label="Sections">
        {GROUPS.map((g) => (
          <div key={g.label} class="nav-group">
            <h2 id={`nav-${g.label}`}>{g.label}</h2>
            <ul aria-labelledby={`nav-${g.label}`}>
              {g.items.map((n) => {
                const l = link(n.path);
                return (
                  <li key={n.path}>
                    <a
                      href={l.href}
                      onClick={(e) => (l.onClick(e), props.onNavigate())}
                      aria-current={n.path === props.section ? 'page' : undefined}
                      title={props.collapsed ? n.label : undefined}
                    >
                      <Icon icon={n.icon} />
                      <span class="label">{n.label}</span>
                    </a>
                  </li>
                );
              })}
            </ul>
          </div>
        ))}
      </nav>
      <footer>
        <button
          type="button"
          class="ghost icon-only sm"
          onClick={toggleTheme}
          aria-label={dark ? 'Switch to the light theme' : 'Switch to the dark theme'}
          title={dark ? 'Light theme' : 'Dark theme'}
        >
          <Icon icon={dark ? Sun : Moon} />
        </button>
        <button
          type="button"
          class="ghost icon-only sm collapse"
          onClick={props.onCollapse}
          aria-label={props.collapsed ? 'Expand the sidebar' : 'Collapse the sidebar'}
          aria-expanded={!props.collapsed}
          title={props.collapsed ? 'Expand' : 'Collapse'}
        >
          <Icon icon={props.collapsed ? PanelLeftOpen : PanelLeftClose} />
        </button>
        <button type="button" class="ghost sm signout" onClick={props.onSignOut} title="Sign out">
          <Icon icon={LogOut} />
          <span class="label">Sign out</span>
        </button>
      </footer>
    </aside>
  );
}
