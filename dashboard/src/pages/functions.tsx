import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { link } from '../router';
import { Confirm, ErrorBox, Modal, useAction, useLoad } from '../ui';
import { FunctionEditor } from './function';

interface Fn {
  slug: string;
  name: string;
  status: string;
  description: string;
  updated_at: string;
  deployed_at: string | null;
}

interface Secret {
  name: string;
  preview: string;
  functions: string[] | null;
}

function Secrets() {
  const { data, error, reload } = useLoad(() => api<Secret[]>('/api/secrets'), []);
  const [adding, setAdding] = useState(false);
  const act = useAction();
  return (
    <div class="stack">
      <div class="row">
        <h2>Secrets</h2>
        <button type="button" onClick={() => setAdding(true)}>
          New secret
        </button>
      </div>
      <p class="muted">Functions read them as environment variables (Deno.env.get). Values are never shown again.</p>
      <ErrorBox error={error ?? act.error} />
      <ul class="list">
        {data?.map((s) => (
          <li key={s.name} class="row">
            <code>{s.name}</code> <span class="muted">{s.preview}</span> <span>{s.functions ? `only ${s.functions.join(', ')}` : 'every function'}</span>
            <button type="button" class="ghost danger" aria-label={`Delete secret ${s.name}`} onClick={() => void act.run(() => api(`/api/secrets/${enc(s.name)}`, { method: 'DELETE' }).then(reload))}>
              Delete
            </button>
          </li>
        ))}
      </ul>
      {adding && (
        <Modal title="New secret" onClose={() => setAdding(false)}>
          <form
            class="stack"
            onSubmit={async (e) => {
              e.preventDefault();
              const f = new FormData(e.currentTarget as HTMLFormElement);
              const only = String(f.get('functions') ?? '').split(',').map((x) => x.trim()).filter(Boolean);
              const body = { value: String(f.get('value')), ...(only.length ? { functions: only } : {}) };
              if (await act.run(() => api(`/api/secrets/${enc(String(f.get('name')))}`, { method: 'PUT', body }))) (setAdding(false), reload());
            }}
          >
            <label for="s-name">Name</label>
            <input id="s-name" name="name" required pattern="[A-Z_][A-Z0-9_]*" placeholder="STRIPE_KEY" />
            <label for="s-value">Value</label>
            <input id="s-value" name="value" type="password" required autocomplete="off" />
            <label for="s-fns">Only these functions (comma-separated slugs, empty: all)</label>
            <input id="s-fns" name="functions" />
            <ErrorBox error={act.error} />
            <button type="submit" class="primary">
              Save secret
            </button>
          </form>
        </Modal>
      )}
    </div>
  );
}

function FunctionList() {
  const { data, error, reload } = useLoad(() => api<Fn[]>('/api/functions'), []);
  const [deleting, setDeleting] = useState<string | null>(null);
  return (
    <section class="stack">
      <div class="row">
        <h1>Functions</h1>
        <a class="button primary" {...link('/functions/new')}>
          New function
        </a>
      </div>
      <ErrorBox error={error} />
      {data?.length === 0 && <p class="muted">No functions yet.</p>}
      <ul class="list">
        {data?.map((f) => (
          <li key={f.slug} class="row">
            <a {...link(`/functions/${enc(f.slug)}`)}>{f.name}</a>
            <code>/functions/{f.slug}</code>
            <span class={`badge ${f.status}`}>{f.status}</span>
            <button type="button" class="ghost danger" aria-label={`Delete function ${f.slug}`} onClick={() => setDeleting(f.slug)}>
              Delete
            </button>
          </li>
        ))}
      </ul>
      <Secrets />
      {deleting && <Confirm what="function" name={deleting} onClose={() => setDeleting(null)} onConfirm={() => api(`/api/functions/${enc(deleting)}`, { method: 'DELETE' }).then(reload)} />}
    </section>
  );
}

/** /functions lists; /functions/new and /functions/<slug> edit, invoke and show logs. */
export function Functions({ params }: { params: string[] }) {
  return params[0] ? <FunctionEditor slug={params[0] === 'new' ? null : params[0]} /> : <FunctionList />;
}
