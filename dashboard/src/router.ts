import { useEffect, useState } from 'preact/hooks';

const BASE = '/dashboard';

/** The app path under /dashboard, e.g. "/tables/notes". */
export function currentPath(): string {
  const p = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  return p === '' || p === '/' ? '/overview' : p.replace(/\/$/, '');
}

/** Goes to an app path (with its query, if any); `replace` keeps the history entry. */
export function navigate(path: string, opts: { replace?: boolean } = {}): void {
  if (opts.replace) history.replaceState(null, '', BASE + path);
  else history.pushState(null, '', BASE + path);
  window.dispatchEvent(new Event('plinth:navigate'));
}

function useLocationPart<T>(read: () => T): T {
  const [value, setValue] = useState(read);
  useEffect(() => {
    const on = () => setValue(read());
    window.addEventListener('popstate', on);
    window.addEventListener('plinth:navigate', on);
    return () => {
      window.removeEventListener('popstate', on);
      window.removeEventListener('plinth:navigate', on);
    };
  }, []);
  return value;
}

/** Re-renders on navigation; returns the current app path. */
export function usePath(): string {
  return useLocationPart(currentPath);
}

/** The query of the current URL, kept up to date (a page's own state: ?new=1 opens its "new" dialog). */
export function useSearch(): URLSearchParams {
  return new URLSearchParams(useLocationPart(() => location.search));
}

/** The href of an app path, and a click handler that navigates without a reload. */
export function link(path: string) {
  return {
    href: BASE + path,
    onClick: (e: MouseEvent) => {
      if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
      e.preventDefault();
      navigate(path);
    },
  };
}
