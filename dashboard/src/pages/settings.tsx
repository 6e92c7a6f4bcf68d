// Settings: what the server shows of its configuration today (auth's public configuration,
// the dependency checks, whether AI is configured) and what every environment variable does,
// read from the README's table at build time so the two never disagree.
import readme from '../../../README.md?raw';
import { ApiError, api } from '../api';
import { Grid } from '../grid/grid';
import { ErrorBox, cellText, useLoad } from '../ui';

interface EnvVar {
  name: string;
  def: string;
  what: string;
}

/** The rows of the README's environment table: | `NAME` | default | what |. */
export function envVars(md: string): EnvVar[] {
  const out: EnvVar[] = [];
  for (const line of md.split('\n')) {
    const m = /^\| (`[A-Z][A-Z0-9_]*`(?:, `[A-Z][A-Z0-9_]*`)*) \| ([^|]*) \| (.*) \|$/.exec(line);
    if (m) out.push({ name: m[1]!.replace(/`/g, ''), def: m[2]!.replace(/`/g, '').trim(), what: m[3]!.replace(/`|\[([^\]]*)\]\([^)]*\)/g, '$1').trim() });
  }
  return out;
}

export function Settings() {
  const auth = useLoad(() => api<Record<string, unknown>>('/api/auth/public-config'), []);
  const ai = useLoad(() => api('/api/ai/models').then(() => 'configured', (e) => (e instanceof ApiError ? `${e.message} ${e.nextActions}` : String(e))), []);
  const vars = envVars(readme);
  return (
    <section class="stack">
      <h1>Settings</h1>
      <p class="muted">Plinth is configured by environment variables, read at start: change them where the server runs, then restart it. Secrets are never shown here.</p>
      <h2>Authentication (effective)</h2>
      <ErrorBox error={auth.error} />
      {auth.data && (
        <Grid<[string, unknown]>
          label="Authentication settings"
          rows={Object.entries(auth.data)}
          rowKey={([k]) => k}
          columns={[
            { key: 'k', label: 'Setting', cell: ([k]) => <code>{k}</code> },
            { key: 'v', label: 'Value', cell: ([, v]) => cellText(v) },
          ]}
        />
      )}
      <h2>AI gateway</h2>
      <p role="status">{ai.data ?? 'Checking…'}</p>
      <h2>Environment variables</h2>
      <Grid<EnvVar>
        label="Environment variables"
        rows={vars}
        rowKey={(v) => v.name}
        columns={[
          { key: 'name', label: 'Variable', cell: (v) => <code>{v.name}</code> },
          { key: 'def', label: 'Default', cell: (v) => v.def },
          { key: 'what', label: 'What it does', cell: (v) => v.what },
        ]}
      />
    </section>
  );
}
