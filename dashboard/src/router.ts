import { useEffect, useState } from 'preact/hooks';

const BASE = '/dashboard';

/** The app path under /dashboard, e.g. "/tables/notes". */
export function currentPath(): string {
  const p = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  return p === '' || p === '/' ? '/overview' : p.replace(/\/$/, '');
}

export function navigate(path: string): void {
  history.pushState(null, '', BASE + path);
  window.dispatchEvent(new Event('plinth:navigate'));
}

/** Re-renders on navigation; returns the current app path. */
export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const on = () => setPath(currentPath());
    window.addEventListener('popstate', on);
    window.addEventListener('plinth:navigate', on);
    return () => {
      window.removeEventListener('popstate', on);
      window.removeEventListener('plinth:navigate', on);
    };
  }, []);
  return path;
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
