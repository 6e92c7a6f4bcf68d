import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, enc } from '../api';
import { link, navigate } from '../router';
import { ErrorBox, useAction, useLoad } from '../ui';
import { useEditor } from '../useEditor';

const STARTER = `export default async function (req: Request): Promise<Response> {
  const name = new URL(req.url).searchParams.get('name') ?? 'world';
  console.log('hello called for', name);
  return Response.json({ hello: name });
}
`;

interface LogLine {
  id: number;
  timestamp: string;
  level: string;
  message: string;
}

/** "… at line 3, column 7" in an INVALID_CODE_SYNTAX message. */
function positionOf(e: unknown): { line: number; column: number } | null {
  if (!(e instanceof ApiError)) return null;
  if (e.position) return e.position;
  const m = /line (\d+), column (\d+)/.exec(e.message);
  return m ? { line: Number(m[1]), column: Number(m[2]) } : null;
}

/** Follows the function's logs: every 2 s asks for the lines after the last one seen. */
function Logs({ slug }: { slug: string }) {
  const [lines, setLines] = useState<LogLine[]>([]);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let last: number | null = null;
    let live = true;
    const poll = async () => {
      try {
        const { logs } = await api<{ logs: LogLine[] }>(`/api/functions/${enc(slug)}/logs?limit=200${last === null ? '' : `&after=${last}`}`);
        if (!live) return;
        if (logs.length) {
          last = logs[logs.length - 1]!.id;
          setLines((old) => [...old, ...logs].slice(-500));
        } else if (last === null) last = 0;
        setError(null);
      } catch (e) {
        if (live) setError(e);
      }
    };
    void poll();
    // Only while the tab is visible: polls count against the admin key's rate limit.
    const timer = setInterval(() => document.visibilityState === 'visible' && void poll(), 2000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [slug]);
  return (
    <div class="stack">
      <h2>Logs</h2>
      <ErrorBox error={error} />
      <pre class="logs" role="log" aria-live="polite" aria-label="Function logs" tabIndex={0}>
        {lines.length ? lines.map((l) => `${l.timestamp.slice(11, 19)} ${l.level.padEnd(5)} ${l.message}`).join('\n') : 'No output yet.'}
      </pre>
    </div>
  );
}

function Invoke({ slug }: { slug: string }) {
  const [out, setOut] = useState<{ status: number; headers: string; body: string } | null>(null);
  const act = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const method = String(f.get('method'));
    const headers: Record<string, string> = {};
    for (const line of String(f.get('headers') ?? '').split('\n')) {
      const i = line.indexOf(':');
      if (i > 0) headers[line.slice(0, i).trim()] = line.slice(i + 1).trim();
    }
    const body = String(f.get('body') ?? '');
    await act.run(async () => {
      const r = await fetch(`/functions/${enc(slug)}${String(f.get('query') ?? '')}`, { method, headers, body: method === 'GET' || method === 'DELETE' || !body ? undefined : body });
      const hs = [...r.headers].map(([k, v]) => `${k}: ${v}`).join('\n');
      setOut({ status: r.status, headers: hs, body: await r.text() });
    });
  };
  return (
    <form class="stack" aria-label="Invoke the function" onSubmit={submit}>
      <h2>Invoke</h2>
      <div class="inline">
        <label for="inv-method">Method</label>
        <select id="inv-method" name="method">
          {['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((m) => (
            <option key={m}>{m}</option>
          ))}
        </select>
        <label for="inv-query">Query string</label>
        <input id="inv-query" name="query" placeholder="?name=Ada" />
      </div>
      <label for="inv-headers">Headers (one "Name: value" a line)</label>
      <textarea id="inv-headers" name="headers" rows={2} defaultValue="content-type: application/json" />
      <label for="inv-body">Body</label>
      <textarea id="inv-body" name="body" rows={3} />
      <button type="submit" disabled={act.busy}>
        Send
      </button>
      <ErrorBox error={act.error} />
      {out && (
        <div role="status" aria-label="Response">
          <p>
            Status <strong>{out.status}</strong>
          </p>
          <pre class="headers">{out.headers}</pre>
          <pre class="body">{out.body}</pre>
        </div>
      )}
    </form>
  );
}

interface Fn {
  slug: string;
  name: string;
  description: string;
  status: string;
  code: string;
}

/** Create or edit a function: code in CodeMirror (TypeScript), status, and for saved ones invoke and logs. */
export function FunctionEditor({ slug }: { slug: string | null }) {
  const { data, error } = useLoad(() => (slug ? api<Fn>(`/api/functions/${enc(slug)}`) : Promise.resolve(null)), [slug]);
  const ready = slug === null || data !== null;
  return (
    <section class="stack">
      <p class="crumbs">
        <a {...link('/functions')}>Functions</a> / {slug ?? 'new'}
      </p>
      <ErrorBox error={error} />
      {ready && <Form key={slug ?? 'new'} fn={data} />}
      {slug && data && (
        <div class="two">
          <Invoke slug={slug} />
          <Logs slug={slug} />
        </div>
      )}
    </section>
  );
}

function Form({ fn }: { fn: Fn | null }) {
  const act = useAction();
  const [saved, setSaved] = useState('');
  const { ref, editor } = useEditor({ doc: fn?.code ?? STARTER, lang: 'typescript', label: 'Function code' });
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const body = { name: String(f.get('name')), description: String(f.get('description') ?? ''), status: String(f.get('status')), code: editor?.value() ?? '' };
    setSaved('');
    const ok = await act.run(async () => {
      if (fn) await api(`/api/functions/${enc(fn.slug)}`, { method: 'PUT', body });
      else {
        const slug = String(f.get('slug') ?? '').trim();
        const r = await api<{ function: Fn }>('/api/functions', { method: 'POST', body: { ...body, ...(slug ? { slug } : {}) } });
        navigate(`/functions/${enc(r.function.slug)}`);
      }
    });
    if (ok) setSaved(`Saved (${body.status}).`);
  };
  const pos = positionOf(act.error);
  return (
    <form class="stack" aria-label="Function" onSubmit={submit}>
      <h1>{fn ? fn.name : 'New function'}</h1>
      <div class="inline">
        <label for="fn-name">Name</label>
        <input id="fn-name" name="name" required defaultValue={fn?.name ?? ''} />
        {!fn && (
          <>
            <label for="fn-slug">Slug</label>
            <input id="fn-slug" name="slug" placeholder="from the name" pattern="[a-z0-9][a-z0-9\-]*" />
          </>
        )}
        <label for="fn-status">Status</label>
        <select id="fn-status" name="status" defaultValue={fn?.status === 'draft' ? 'draft' : 'active'}>
          <option value="active">active</option>
          <option value="draft">draft</option>
        </select>
      </div>
      <label for="fn-desc">Description</label>
      <input id="fn-desc" name="description" defaultValue={fn?.description ?? ''} />
      <div ref={ref} class="editor code" />
      <div class="row">
        <button type="submit" class="primary" disabled={act.busy || !editor}>
          {fn ? 'Save' : 'Create function'}
        </button>
        {pos && (
          <button type="button" class="ghost" onClick={() => editor?.goTo(pos.line, pos.column)}>
            Go to line {pos.line}, column {pos.column}
          </button>
        )}
        {saved && <span role="status">{saved}</span>}
      </div>
      <ErrorBox error={act.error} />
    </form>
  );
}
