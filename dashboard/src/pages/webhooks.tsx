// Database webhooks (/api/database/webhooks): list, create (the signing secret shown once),
// enable/disable, delete, and each hook's deliveries with redelivery.
import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { Grid } from '../grid/grid';
import { Confirm, CopyButton, ErrorBox, Modal, cellText, useAction, useLoad } from '../ui';
import { LoadState } from './notavailable';

interface Hook {
  id: string;
  name: string;
  table: string;
  events: string[];
  columns: string[] | null;
  url: string | null;
  functionSlug: string | null;
  enabled: boolean;
}
interface Delivery {
  id: string;
  event: string;
  status: string;
  attempts: number;
  responseStatus: number | null;
  error: string | null;
  createdAt: string;
}

const EVENTS = ['INSERT', 'UPDATE', 'DELETE'];
const BASE = '/api/database/webhooks';
const toggle = (list: string[], v: string, on: boolean) => (on ? [...list, v] : list.filter((x) => x !== v));

/** The form's fields as the API takes them: one target, the column filter only for UPDATE. */
function bodyOf(f: { name: string; table: string; events: string[]; target: string; url: string; functionSlug: string; columns: string[] }) {
  const filter = f.events.includes('UPDATE') && f.columns.length ? { columns: f.columns } : {};
  return { name: f.name, table: f.table, events: f.events, ...(f.target === 'url' ? { url: f.url } : { functionSlug: f.functionSlug }), ...filter };
}

function CreateHook({ onClose, onCreated }: { onClose: () => void; onCreated: (h: Hook & { secret: string }) => void }) {
  const tables = useLoad(() => api<string[]>('/api/database/tables'), []);
  const fns = useLoad(() => api<Array<{ slug: string; name: string }>>('/api/functions'), []);
  const [f, setF] = useState({ name: '', table: '', events: ['INSERT'], target: 'url', url: '', functionSlug: '', columns: [] as string[] });
  const table = f.table || tables.data?.[0] || '';
  const slug = f.functionSlug || fns.data?.[0]?.slug || '';
  const schema = useLoad(() => (table ? api<{ columns: Array<{ name: string }> }>(`/api/database/tables/${enc(table)}/schema`) : Promise.resolve(null)), [table]);
  const act = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    await act.run(async () => onCreated(await api(BASE, { method: 'POST', body: bodyOf({ ...f, table, functionSlug: slug }) })));
  };
  return (
    <Modal title="New webhook" onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        <ErrorBox error={tables.error ?? fns.error} />
        <label for="wh-name">Name</label>
        <input id="wh-name" required maxLength={200} value={f.name} onInput={(e) => setF({ ...f, name: e.currentTarget.value })} />
        <label for="wh-table">Table</label>
        <select id="wh-table" required value={table} onChange={(e) => setF({ ...f, table: e.currentTarget.value, columns: [] })}>
          {(tables.data ?? []).map((t) => <option key={t}>{t}</option>)}
        </select>
        <fieldset class="column">
          <legend>Events</legend>
          {EVENTS.map((ev) => (
            <label key={ev} class="check">
              <input type="checkbox" checked={f.events.includes(ev)} onChange={(e) => setF({ ...f, events: toggle(f.events, ev, e.currentTarget.checked) })} /> {ev}
            </label>
          ))}
        </fieldset>
        {f.events.includes('UPDATE') && (schema.data?.columns.length ?? 0) > 0 && (
          <fieldset class="column">
            <legend>UPDATE fires only when one of these changed (none checked: any change)</legend>
            {schema.data!.columns.map((c) => (
              <label key={c.name} class="check">
                <input type="checkbox" checked={f.columns.includes(c.name)} onChange={(e) => setF({ ...f, columns: toggle(f.columns, c.name, e.currentTarget.checked) })} /> {c.name}
              </label>
            ))}
          </fieldset>
        )}
        <label for="wh-target">Sends to</label>
        <select id="wh-target" value={f.target} onChange={(e) => setF({ ...f, target: e.currentTarget.value })}>
          <option value="url">a URL</option>
          <option value="function">a function</option>
        </select>
        {f.target === 'url' ? (
          <>
            <label for="wh-url">URL</label>
            <input id="wh-url" type="url" required value={f.url} placeholder="https://example.com/hooks/orders" aria-describedby="wh-url-note" onInput={(e) => setF({ ...f, url: e.currentTarget.value })} />
            <p id="wh-url-note" class="muted">A public address; an internal receiver must be listed in OUTBOUND_ALLOW_HOSTS.</p>
          </>
        ) : (
          <>
            <label for="wh-fn">Function</label>
            <select id="wh-fn" required value={slug} onChange={(e) => setF({ ...f, functionSlug: e.currentTarget.value })}>
              {(fns.data ?? []).map((fn) => <option key={fn.slug} value={fn.slug}>{fn.name} ({fn.slug})</option>)}
            </select>
            {fns.data?.length === 0 && <p class="muted">No functions yet: deploy one on the Functions page first.</p>}
          </>
        )}
        <ErrorBox error={act.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={act.busy || f.events.length === 0}>Create webhook</button>
        </div>
      </form>
    </Modal>
  );
}

/** The signing secret, the one time the API gives it. */
function Secret({ hook, onClose }: { hook: Hook & { secret: string }; onClose: () => void }) {
  return (
    <Modal title={`Signing secret of ${hook.name}`} onClose={onClose}>
      <div class="stack">
        <p class="warn" role="status">
          Webhook {hook.name} created. Copy its signing secret now: <strong>you will not see it again.</strong> Receivers verify each delivery's <code>webhook-signature</code> with it.
        </p>
        <label for="wh-secret">Signing secret</label>
        <input id="wh-secret" class="mono" readOnly value={hook.secret} onFocus={(e) => e.currentTarget.select()} />
        <div class="actions">
          <CopyButton text={hook.secret} label="Copy secret" />
          <button type="button" class="primary" onClick={onClose}>I have copied it</button>
        </div>
      </div>
    </Modal>
  );
}

function Deliveries({ hook, onClose }: { hook: Hook; onClose: () => void }) {
  const path = `${BASE}/${enc(hook.id)}/deliveries`;
  const { data, error, reload } = useLoad(() => api<Delivery[]>(path), [path]);
  const act = useAction();
  return (
    <Modal title={`Deliveries of ${hook.name}`} onClose={onClose}>
      <LoadState error={error} what="The delivery log" endpoint={`GET ${path}`}>
        <div class="actions">
          <button type="button" onClick={reload}>Refresh</button>
        </div>
        {data !== null && (
          <Grid<Delivery>
            label="Deliveries"
            rows={data}
            rowKey={(d) => d.id}
            empty="No deliveries yet."
            columns={[
              { key: 'createdAt', label: 'Created', cell: (d) => new Date(d.createdAt).toLocaleString(), cellClass: () => 'nowrap' },
              { key: 'event', label: 'Event', cell: (d) => d.event },
              { key: 'status', label: 'Status', cell: (d) => <span class={d.status === 'failed' ? 'badge bad' : 'badge'}>{d.status}</span> },
              { key: 'attempts', label: 'Attempts', cell: (d) => d.attempts, cellClass: () => 'num' },
              { key: 'responseStatus', label: 'Response', cell: (d) => cellText(d.responseStatus), cellClass: () => 'num' },
              { key: 'error', label: 'Error', cell: (d) => d.error ?? '' },
            ]}
            actions={(d) => (
              <button type="button" class="ghost" aria-label={`Redeliver ${d.id}`} onClick={() => void act.run(() => api(`${path}/${enc(d.id)}/redeliver`, { method: 'POST' }).then(reload))}>
                Redeliver
              </button>
            )}
          />
        )}
        <ErrorBox error={act.error} />
      </LoadState>
    </Modal>
  );
}

export function Webhooks() {
  const { data, error, reload } = useLoad(() => api<Hook[]>(BASE), []);
  const [open, setOpen] = useState<{ creating: true } | { created: Hook & { secret: string } } | { deliveries: Hook } | { deleting: Hook } | null>(null);
  const act = useAction();
  const setEnabled = (h: Hook, enabled: boolean) => act.run(() => api(`${BASE}/${enc(h.id)}`, { method: 'PATCH', body: { enabled } }).then(reload));
  return (
    <section class="stack">
      <div class="row">
        <h1>Webhooks</h1>
        {!error && <button type="button" class="primary" onClick={() => setOpen({ creating: true })}>New webhook</button>}
      </div>
      <LoadState error={error} what="Webhooks" endpoint={`GET ${BASE}`}>
        <ErrorBox error={act.error} />
        {data !== null && (
          <Grid<Hook>
            label="Webhooks"
            rows={data}
            rowKey={(h) => h.id}
            empty="No webhooks yet."
            columns={[
              { key: 'name', label: 'Name', cell: (h) => h.name },
              { key: 'table', label: 'Table', cell: (h) => h.table },
              { key: 'events', label: 'Events', cell: (h) => h.events.join(' ') },
              { key: 'columns', label: 'UPDATE of', cell: (h) => h.columns?.join(', ') ?? 'any column' },
              { key: 'target', label: 'Sends to', cell: (h) => (h.url ? <code>{h.url}</code> : `function ${h.functionSlug ?? ''}`) },
              {
                key: 'enabled',
                label: 'Enabled',
                cell: (h) => <input type="checkbox" role="switch" aria-label={`Enabled: ${h.name}`} checked={h.enabled} disabled={act.busy} onChange={(e) => void setEnabled(h, e.currentTarget.checked)} />,
              },
            ]}
            actions={(h) => (
              <>
                <button type="button" class="ghost" aria-label={`Deliveries of ${h.name}`} onClick={() => setOpen({ deliveries: h })}>Deliveries</button>
                <button type="button" class="ghost danger" aria-label={`Delete webhook ${h.name}`} onClick={() => setOpen({ deleting: h })}>Delete</button>
              </>
            )}
          />
        )}
      </LoadState>
      {open && 'creating' in open && <CreateHook onClose={() => setOpen(null)} onCreated={(h) => (setOpen({ created: h }), reload())} />}
      {open && 'created' in open && <Secret hook={open.created} onClose={() => setOpen(null)} />}
      {open && 'deliveries' in open && <Deliveries hook={open.deliveries} onClose={() => setOpen(null)} />}
      {open && 'deleting' in open && <Confirm what="webhook" name={open.deleting.name} onConfirm={() => api(`${BASE}/${enc(open.deleting.id)}`, { method: 'DELETE' }).then(reload)} onClose={() => setOpen(null)} />}
    </section>
  );
}
