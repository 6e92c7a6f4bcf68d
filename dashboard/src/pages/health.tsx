import { api } from '../api';
import { Grid } from '../grid/grid';
import { RefreshCw } from '../components/icons';
import { link } from '../router';
import { Badge, Button, Card, CopyButton, ErrorBox, PageHeader, useLoad } from '../ui';

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
    <section class="stack loose">
      <PageHeader
        title="Health"
        description="The server and each service it depends on, checked now."
        extra={h && <Badge tone={h.status === 'ok' ? 'success' : 'danger'}>{h.status}</Badge>}
        actions={
          <Button icon={RefreshCw} onClick={health.reload}>
            Check again
          </Button>
        }
      />
      <ErrorBox error={health.error} />
      <Card title="Dependencies">
        {h && (
          <p class="muted">
            {h.service} {h.plinthVersion ?? h.version} · checked {new Date(h.timestamp).toLocaleString()}
          </p>
        )}
        <Grid
          label="Dependency checks"
          rows={Object.entries(h?.checks ?? {})}
          loading={!h && !health.error}
          rowKey={([name]) => name}
          columns={[
            { key: 'name', label: 'Dependency', cell: ([name]) => name },
            {
              key: 'status',
              label: 'Status',
              cell: ([, c]) => <Badge tone={c.status === 'ok' ? 'success' : 'danger'}>{c.status}</Badge>,
            },
            { key: 'message', label: 'Message', cell: ([, c]) => c.message ?? '' },
          ]}
        />
      </Card>
      <Card title="Anon key">
        <p class="muted">
          Public: put it in browser and mobile clients (header {key.data?.header ?? 'apikey'}). Row-level security
          decides what it can read. More on <a {...link('/connect')}>API keys &amp; connect</a>.
        </p>
        <ErrorBox error={key.error} />
        {key.data && (
          <div class="copyfield">
            <code class="url" aria-label="Anon key">
              {key.data.anonKey}
            </code>
            <CopyButton text={key.data.anonKey} label="Copy anon key" what="Anon key" />
          </div>
        )}
      </Card>
    </section>
  );
}
