// Functions: the list with each one's status and path; with none yet, the templates to start
// from. /functions/new and /functions/<slug> edit, invoke and show logs.
import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { Icon, Plus, SquareFunction, Trash2 } from '../components/icons';
import { Grid } from '../grid/grid';
import { link } from '../router';
import { Badge, Button, Card, Confirm, EmptyState, ErrorBox, PageHeader, useLoad } from '../ui';
import { FunctionEditor } from './function';
import { TEMPLATES } from './function-templates';

interface Fn {
  slug: string;
  name: string;
  status: string;
  description: string;
  updated_at: string;
  deployed_at: string | null;
}

/** The templates a new function starts from, each one link. */
function Templates() {
  return (
    <div class="cards">
      {TEMPLATES.map((t) => (
        <a key={t.id} class="card stat" {...link(`/functions/new?template=${t.id}`)}>
          <span class="label">Template</span>
          <strong>{t.name}</strong>
          <span class="muted">{t.description}</span>
        </a>
      ))}
    </div>
  );
}

function FunctionList() {
  const { data, error, reload, loading } = useLoad(() => api<Fn[]>('/api/functions'), []);
  const [deleting, setDeleting] = useState<string | null>(null);
  const newButton = (
    <a class="button primary" {...link('/functions/new')}>
      <Icon icon={Plus} /> New function
    </a>
  );
  return (
    <section class="stack">
      <PageHeader
        title="Functions"
        description={
          <>
            TypeScript on Deno, served at <code>/functions/&lt;slug&gt;</code>. Secrets reach them as environment
            variables.
          </>
        }
        actions={newButton}
      />
      <ErrorBox error={error} />
      {data?.length === 0 ? (
        <>
          <EmptyState
            icon={SquareFunction}
            title="No functions yet"
            action={
              <a class="button primary" {...link('/functions/new')}>
                <Icon icon={Plus} /> Create your first function
              </a>
            }
          >
            Start from a template below: each runs as is, and shows how to read the request, call this project and log.
          </EmptyState>
          <Templates />
        </>
      ) : (
        <Grid<Fn>
          label="Functions"
          rows={data ?? []}
          loading={loading}
          rowKey={(f) => f.slug}
          columns={[
            { key: 'name', label: 'Function', cell: (f) => <a {...link(`/functions/${enc(f.slug)}`)}>{f.name}</a> },
            { key: 'path', label: 'Path', cell: (f) => <code>/functions/{f.slug}</code> },
            {
              key: 'status',
              label: 'Status',
              cell: (f) => <Badge tone={f.status === 'active' ? 'success' : 'warning'}>{f.status}</Badge>,
            },
            { key: 'description', label: 'Description', cell: (f) => <span class="muted">{f.description}</span> },
            {
              key: 'updated',
              label: 'Updated',
              cell: (f) => new Date(f.updated_at).toLocaleString(),
              cellClass: () => 'nowrap',
            },
          ]}
          actions={(f) => (
            <Button
              variant="ghost danger"
              size="sm"
              icon={Trash2}
              aria-label={`Delete function ${f.slug}`}
              onClick={() => setDeleting(f.slug)}
            >
              Delete
            </Button>
          )}
        />
      )}
      {data && data.length > 0 && (
        <Card title="Start from a template">
          <Templates />
        </Card>
      )}
      {deleting && (
        <Confirm
          what="function"
          name={deleting}
          onClose={() => setDeleting(null)}
          onConfirm={() => api(`/api/functions/${enc(deleting)}`, { method: 'DELETE' }).then(reload)}
        />
      )}
    </section>
  );
}

/** /functions lists; /functions/new and /functions/<slug> edit, invoke and show logs. */
export function Functions({ params }: { params: string[] }) {
  return params[0] ? <FunctionEditor slug={params[0] === 'new' ? null : params[0]} /> : <FunctionList />;
}
