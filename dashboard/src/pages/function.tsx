import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, enc } from '../api';
import { Save } from '../components/icons';
import { navigate } from '../router';
import { Badge, Button, Card, ErrorBox, Field, PageHeader, SkeletonLines, toast, useAction, useLoad } from '../ui';
import { useEditor } from '../useEditor';
import { TEMPLATES } from './function-templates';

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
        const { logs } = await api<{ logs: LogLine[] }>(
          `/api/functions/${enc(slug)}/logs?limit=200${last === null ? '' : `&after=${last}`}`,
        );
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
        {lines.length
          ? lines.map((l) => `${l.timestamp.slice(11, 19)} ${l.level.padEnd(5)} ${l.message}`).join('\n')
          : 'No output yet.'}
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
      const r = await fetch(`/functions/${enc(slug)}${String(f.get('query') ?? '')}`, {
        method,
        headers,
        body: method === 'GET' || method === 'DELETE' || !body ? undefined : body,
      });
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
  const { data, error } = useLoad(
    () => (slug ? api<Fn>(`/api/functions/${enc(slug)}`) : Promise.resolve(null)),
    [slug],
  );
  const ready = slug === null || data !== null;
  return (
    <section class="stack">
      <ErrorBox error={error} />
      {!ready && !error && <SkeletonLines lines={8} label="Loading the function" />}
      {ready && <Form key={slug ?? 'new'} fn={data} />}
      {slug && data && (
        <div class="two">
          <Card>
            <Invoke slug={slug} />
          </Card>
          <Card>
            <Logs slug={slug} />
          </Card>
        </div>
      )}
    </section>
  );
}

/** The template a new function starts from (?template=<id>), else the first. */
function startCode(): string {
  const id = new URLSearchParams(location.search).get('template');
  return (TEMPLATES.find((t) => t.id === id) ?? TEMPLATES[0]!).code;
}

function Form({ fn }: { fn: Fn | null }) {
  const act = useAction();
  const { ref, editor } = useEditor({ doc: fn?.code ?? startCode(), lang: 'typescript', label: 'Function code' });
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const body = {
      name: String(f.get('name')),
      description: String(f.get('description') ?? ''),
      status: String(f.get('status')),
      code: editor?.value() ?? '',
    };
    await act.run(async () => {
      if (fn) {
        await api(`/api/functions/${enc(fn.slug)}`, { method: 'PUT', body });
        toast(`Saved ${fn.name} (${body.status}).`);
        return;
      }
      const slug = String(f.get('slug') ?? '').trim();
      const r = await api<{ function: Fn }>('/api/functions', {
        method: 'POST',
        body: { ...body, ...(slug ? { slug } : {}) },
      });
      toast(`Created ${r.function.name}: it answers at /functions/${r.function.slug}.`);
      navigate(`/functions/${enc(r.function.slug)}`, { replace: true });
    });
  };
  const pos = positionOf(act.error);
  return (
    <form class="stack" aria-label="Function" onSubmit={submit}>
      <PageHeader
        crumbs={[['Functions', '/functions']]}
        title={fn ? fn.name : 'New function'}
        extra={fn && <Badge tone={fn.status === 'active' ? 'success' : 'warning'}>{fn.status}</Badge>}
        description={
          fn ? (
            <code>/functions/{fn.slug}</code>
          ) : (
            'TypeScript on Deno: export a default function that takes a Request and returns a Response. Import packages (npm:@insforge/sdk, npm:zod, jsr:…); InsForge and Supabase forms (module.exports, Deno.serve) run too.'
          )
        }
        actions={
          <Button type="submit" variant="primary" icon={Save} disabled={act.busy || !editor}>
            {fn ? 'Save' : 'Create function'}
          </Button>
        }
      />
      <div class="fields">
        <Field id="fn-name" label="Name">
          <input id="fn-name" name="name" required defaultValue={fn?.name ?? ''} />
        </Field>
        {!fn && (
          <Field id="fn-slug" label="Slug">
            <input id="fn-slug" name="slug" placeholder="from the name" pattern="[a-z0-9][a-z0-9\-]*" />
          </Field>
        )}
        <Field id="fn-status" label="Status">
          <select id="fn-status" name="status" defaultValue={fn?.status === 'draft' ? 'draft' : 'active'}>
            <option value="active">active</option>
            <option value="draft">draft</option>
          </select>
        </Field>
        {!fn && (
          <Field id="fn-template" label="Start from">
            <select
              id="fn-template"
              defaultValue={new URLSearchParams(location.search).get('template') ?? TEMPLATES[0]!.id}
              onChange={(e) => editor?.set(TEMPLATES.find((t) => t.id === e.currentTarget.value)!.code)}
            >
              {TEMPLATES.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
          </Field>
        )}
        <Field id="fn-desc" label="Description">
          <input id="fn-desc" name="description" defaultValue={fn?.description ?? ''} />
        </Field>
      </div>
      <div ref={ref} class="editor code" />
      {pos && (
        <div>
          <Button variant="ghost" onClick={() => editor?.goTo(pos.line, pos.column)}>
            Go to line {pos.line}, column {pos.column}
          </Button>
        </div>
      )}
      <ErrorBox error={act.error} />
    </form>
  );
}
