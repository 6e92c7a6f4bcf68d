// Functions › Secrets: values functions read as environment variables (Deno.env.get), shown
// only as a preview once saved; each for every function or only some.
import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { Lock, Plus, Trash2 } from '../components/icons';
import { Grid } from '../grid/grid';
import {
  Badge,
  Button,
  Confirm,
  Dialog,
  EmptyState,
  ErrorBox,
  Field,
  PageHeader,
  toast,
  useAction,
  useLoad,
} from '../ui';

interface Secret {
  name: string;
  preview: string;
  functions: string[] | null;
}

function NewSecret({ onClose, onDone }: { onClose: () => void; onDone: () => void }) {
  const act = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const name = String(f.get('name'));
    const only = String(f.get('functions') ?? '')
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
    const body = { value: String(f.get('value')), ...(only.length ? { functions: only } : {}) };
    if (await act.run(() => api(`/api/secrets/${enc(name)}`, { method: 'PUT', body }))) {
      toast(`Saved the secret ${name}.`);
      onDone();
    }
  };
  return (
    <Dialog title="New secret" onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        <Field id="s-name" label="Name" hint="Upper case, digits and _: functions read Deno.env.get('STRIPE_KEY').">
          <input
            id="s-name"
            name="name"
            required
            pattern="[A-Z_][A-Z0-9_]*"
            placeholder="STRIPE_KEY"
            aria-describedby="s-name-hint"
          />
        </Field>
        <Field id="s-value" label="Value" hint="Never shown again once saved.">
          <input
            id="s-value"
            name="value"
            type="password"
            required
            autocomplete="off"
            aria-describedby="s-value-hint"
          />
        </Field>
        <Field id="s-fns" label="Only these functions" hint="Comma-separated slugs; empty: every function.">
          <input id="s-fns" name="functions" aria-describedby="s-fns-hint" />
        </Field>
        <ErrorBox error={act.error} />
        <div class="footer">
          <button type="button" class="ghost" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={act.busy}>
            Save secret
          </button>
        </div>
      </form>
    </Dialog>
  );
}

export function Secrets() {
  const { data, error, reload, loading } = useLoad(() => api<Secret[]>('/api/secrets'), []);
  const [adding, setAdding] = useState(false);
  const [deleting, setDeleting] = useState<string | null>(null);
  return (
    <section class="stack">
      <PageHeader
        title="Secrets"
        description="Values your functions read as environment variables (Deno.env.get). Saved values are never shown again."
        actions={
          <Button variant="primary" icon={Plus} onClick={() => setAdding(true)}>
            New secret
          </Button>
        }
      />
      <ErrorBox error={error} />
      <Grid<Secret>
        label="Secrets"
        rows={data ?? []}
        loading={loading}
        rowKey={(s) => s.name}
        empty={
          <EmptyState
            icon={Lock}
            title="No secrets yet"
            action={
              <Button variant="primary" icon={Plus} onClick={() => setAdding(true)}>
                Add a secret
              </Button>
            }
          >
            Keep API keys and tokens out of your code: save them here and read them in a function with Deno.env.get.
          </EmptyState>
        }
        columns={[
          { key: 'name', label: 'Name', cell: (s) => <code>{s.name}</code> },
          { key: 'preview', label: 'Value', cell: (s) => <span class="muted">{s.preview}</span> },
          {
            key: 'scope',
            label: 'Functions',
            cell: (s) => (s.functions ? s.functions.join(', ') : <Badge plain>every function</Badge>),
          },
        ]}
        actions={(s) => (
          <Button
            variant="ghost danger"
            size="sm"
            icon={Trash2}
            aria-label={`Delete secret ${s.name}`}
            onClick={() => setDeleting(s.name)}
          >
            Delete
          </Button>
        )}
      />
      {adding && <NewSecret onClose={() => setAdding(false)} onDone={() => (setAdding(false), reload())} />}
      {deleting && (
        <Confirm
          what="secret"
          name={deleting}
          onClose={() => setDeleting(null)}
          onConfirm={() => api(`/api/secrets/${enc(deleting)}`, { method: 'DELETE' }).then(reload)}
        />
      )}
    </section>
  );
}
