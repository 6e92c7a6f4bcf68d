// The first page: sign-in only. Everything else loads after sign-in (a separate chunk).
import '@fontsource-variable/inter/wght.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, session } from './api';
import { Logo } from './components/logo';
import './style.css';
import { applyStoredTheme } from './theme';

type Shell = typeof import('./shell');

applyStoredTheme();

const HINT =
  'Use the admin key (ik_…) that the server printed at its first start, or its ADMIN_API_KEY. Lost it? On the server run "npm run plinth -- keys rotate-admin" and restart: it prints a new one.';

function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(e: Event) {
    e.preventDefault();
    const key = String(new FormData(e.currentTarget as HTMLFormElement).get('key') ?? '').trim();
    setBusy(true);
    setError(null);
    try {
      await api('/api/keys/anon', { key }).catch((e) => {
        // The API's hint speaks to API clients; here the admin key itself is what is missing.
        if (e instanceof ApiError && e.status === 401) throw new ApiError(e.status, e.code, e.message, HINT);
        throw e;
      });
      session.set(key);
      onSignedIn();
    } catch (err) {
      setError(
        err instanceof ApiError
          ? err
          : new ApiError(0, 'NETWORK', 'Plinth did not answer.', 'Check that the server runs.'),
      );
    } finally {
      setBusy(false);
    }
  }
  return (
    <main class="signin">
      <form onSubmit={submit} aria-describedby={error ? 'signin-error' : undefined}>
        <Logo />
        <h1>Sign in to Plinth</h1>
        <p class="muted">
          Use this project's admin API key. It stays in this browser tab only and is gone when the tab closes.
        </p>
        <label for="key">Admin API key</label>
        <input
          id="key"
          name="key"
          type="password"
          autocomplete="off"
          required
          autofocus
          spellcheck={false}
          placeholder="ik_…"
        />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        {error && (
          <div id="signin-error" class="error" role="alert">
            <strong>{error.message}</strong>
            {error.nextActions && <p>{error.nextActions}</p>}
          </div>
        )}
        <details>
          <summary>Where do I find the admin key?</summary>
          <p>{HINT}</p>
        </details>
      </form>
    </main>
  );
}

/** The app's frame while the signed-in part loads. */
function Boot() {
  return (
    <div class="boot" role="status" aria-label="Loading the dashboard">
      <div />
      <div />
    </div>
  );
}

function Root() {
  const [signedIn, setSignedIn] = useState(session.key() !== null);
  const [shell, setShell] = useState<Shell | null>(null);
  useEffect(() => {
    const out = () => {
      session.clear();
      setSignedIn(false);
    };
    window.addEventListener('plinth:signed-out', out);
    return () => window.removeEventListener('plinth:signed-out', out);
  }, []);
  useEffect(() => {
    if (signedIn && !shell) void import('./shell').then(setShell);
  }, [signedIn]);
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
  if (!shell) return <Boot />;
  return <shell.Shell onSignOut={() => window.dispatchEvent(new Event('plinth:signed-out'))} />;
}

render(<Root />, document.getElementById('app')!);
