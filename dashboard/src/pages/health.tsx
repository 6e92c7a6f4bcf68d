import { api } from '../api';
import { Grid } from '../grid/grid';
import { CopyButton, ErrorBox, useLoad } from '../ui';

interface Health {
  status: string;
  service: string;
  version: string;
  plinthVersion?: string;
  timestamp: string;
  checks?: Record<string, { status: string; message?: string }>;
}

/** Health with every dependency check, and the anon key to copy. */
export function Health() {
  const health = useLoad(async () => {
    const r = await fetch('/api/health?checks=true');
    return (await r.json()) as Health;
  }, []);
  const key = useLoad(() => api<{ anonKey: string; header: string }>('/api/keys/anon'), []);
  const h = health.data;
  return (
    <section class="stack">
      <div class="row">
        <h1>Health</h1>
        <button type="button" onClick={health.reload}>
          Check again
        </button>
      </div>
      <ErrorBox error={health.error} />
      {h && (
        <>
          <p>
            <span class={`badge ${h.status === 'ok' ? 'ok' : 'bad'}`}>{h.status}</span> {h.service} {h.plinthVersion ?? h.version} · {new Date(h.timestamp).toLocaleString()}
          </p>
          <Grid
            label="Dependency checks"
            rows={Object.entries(h.checks ?? {})}
            rowKey={([name]) => name}
            columns={[
              { key: 'name', label: 'Dependency', cell: ([name]) => name },
              { key: 'status', label: 'Status', cell: ([, c]) => <span class={`badge ${c.status === 'ok' ? 'ok' : 'bad'}`}>{c.status}</span> },
              { key: 'message', label: 'Message', cell: ([, c]) => c.message ?? '' },
            ]}
          />
        </>
      )}
      <h2>Anon key</h2>
      <p class="muted">Public: put it in browser and mobile clients (header {key.data?.header ?? 'apikey'}). Row-level security decides what it can read.</p>
      <ErrorBox error={key.error} />
      {key.data && (
        <p class="row">
          <code class="url" aria-label="Anon key">{key.data.anonKey}</code> <CopyButton text={key.data.anonKey} label="Copy anon key" />
        </p>
      )}
    </section>
  );
}
