// The colour theme: the system's by default; the toggle's choice (light or dark) is remembered in
// this browser's localStorage and set as data-theme on <html>, which tokens.css reads.
export type Theme = 'system' | 'light' | 'dark';

const KEY = 'plinth.theme';

export function getTheme(): Theme {
  const t = localStorage.getItem(KEY);
  return t === 'light' || t === 'dark' ? t : 'system';
}

/** Applies a theme; 'system' forgets the choice. */
export function setTheme(t: Theme): void {
  if (t === 'system') {
    localStorage.removeItem(KEY);
    delete document.documentElement.dataset.theme;
  } else {
    localStorage.setItem(KEY, t);
    document.documentElement.dataset.theme = t;
  }
  window.dispatchEvent(new Event('plinth:theme'));
}

/** The theme in force: the choice, or what the system prefers. */
export function effectiveTheme(): 'light' | 'dark' {
  const t = getTheme();
  if (t !== 'system') return t;
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

/** The toggle: light when dark is in force, else dark (remembered). */
export function toggleTheme(): void {
  setTheme(effectiveTheme() === 'dark' ? 'light' : 'dark');
}

/** Sets the remembered theme on <html> before the first render. */
export function applyStoredTheme(): void {
  const t = getTheme();
  if (t !== 'system') document.documentElement.dataset.theme = t;
}
