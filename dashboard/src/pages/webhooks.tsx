// Database webhooks (/api/database/webhooks): list, create (the signing secret shown once),
// enable/disable, delete, and each hook's deliveries with redelivery.
import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { Grid } from '../grid/grid';
import { Plus, Webhook as WebhookIcon } from '../components/icons';
import { Button, Confirm, EmptyState, ErrorBox, Modal, PageHeader, toast, useAction, useLoad } from '../ui';
import { LoadState } from './notavailable';
import { BASE, Deliveries, type Hook, Secret } from './webhook-dialogs';

const EVENTS = ['INSERT', 'UPDATE', 'DELETE'];
const toggle = (list: string[], v: string, on: boolean) => (on ? [...list, v] : list.filter((x) => x !== v));

/** The form's fields as the API takes them: one target, the column filter only for UPDATE. */
function bodyOf(f: {
  name: string;
  table: string;
  events: string[];
  target: string;
  url: string;
  functionSlug: string;
  columns: string[];
}) {
  const filter = f.events.includes('UPDATE') && f.columns.length ? { columns: f.columns } : {};
  return {
    name: f.name,
    table: f.table,
    events: f.events,
    ...(f.target === 'url' ? { url: f.url } : { functionSlug: f.functionSlug }),
    ...filter,
  };
}

function CreateHook({
  onClose,
  onCreated,
}: {
  onClose: () => void;
  onCreated: (h: Hook & { secret: string }) => void;
}) {
  const tables = useLoad(() => api<string[]>('/api/database/tables'), []);
  const fns = useLoad(() => api<Array<{ slug: string; name: string }>>('/api/functions'), []);
  const [f, setF] = useState({
    name: '',
    table: '',
    events: ['INSERT'],
    target: 'url',
    url: '',
    functionSlug: '',
    columns: [] as string[],
  });
  const table = f.table || tables.data?.[0] || '';
  const slug = f.functionSlug || fns.data?.[0]?.slug || '';
  const schema = useLoad(
    () =>
      table
        ? api<{ columns: Array<{ name: string }> }>(`/api/database/tables/${enc(table)}/schema`)
        : Promise.resolve(null),
    [table],
  );
  const act = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    await act.run(async () =>
      onCreated(await api(BASE, { method: 'POST', body: bodyOf({ ...f, table, functionSlug: slug }) })),
    );
  };
  return (
    <Modal title="New webhook" onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        <ErrorBox error={tables.error ?? fns.error} />
        <label for="wh-name">Name</label>
        <input
          id="wh-name"
          required
          maxLength={200}
          value={f.name}
          onInput={(e) => setF({ ...f, name: e.currentTarget.value })}
        />
        <label for="wh-table">Table</label>
        <select
          id="wh-table"
          required
          value={table}
          onChange={(e) => setF({ ...f, table: e.currentTarget.value, columns: [] })}
        >
          {(tables.data ?? []).map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
        <fieldset class="column">
          <legend>Events</legend>
          {EVENTS.map((ev) => (
            <label key={ev} class="check">
              <input
                type="checkbox"
                checked={f.events.includes(ev)}
                onChange={(e) => setF({ ...f, events: toggle(f.events, ev, e.currentTarget.checked) })}
              />{' '}
              {ev}
            </label>
          ))}
        </fieldset>
        {f.events.includes('UPDATE') && (schema.data?.columns.length ?? 0) > 0 && (
          <fieldset class="column">
            <legend>UPDATE fires only when one of these changed (none checked: any change)</legend>
            {schema.data!.columns.map((c) => (
              <label key={c.name} class="check">
                <input
                  type="checkbox"
                  checked={f.columns.includes(c.name)}
                  onChange={(e) => setF({ ...f, columns: toggle(f.columns, c.name, e.currentTarget.checked) })}
                />{' '}
                {c.name}
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
            <input
              id="wh-url"
              type="url"
              required
              value={f.url}
              placeholder="https://example.com/hooks/orders"
              aria-describedby="wh-url-note"
              onInput={(e) => setF({ ...f, url: e.currentTarget.value })}
            />
            <p id="wh-url-note" class="muted">
              A public address; an internal receiver must be listed in OUTBOUND_ALLOW_HOSTS.
            </p>
          </>
        ) : (
          <>
            <label for="wh-fn">Function</label>
            <select
              id="wh-fn"
              required
              value={slug}
              onChange={(e) => setF({ ...f, functionSlug: e.currentTarget.value })}
            >
              {(fns.data ?? []).map((fn) => (
                <option key={fn.slug} value={fn.slug}>
                  {fn.name} ({fn.slug})
                </option>
              ))}
            </select>
            {fns.data?.length === 0 && <p class="muted">No functions yet: deploy one on the Functions page first.</p>}
          </>
        )}
        <ErrorBox error={act.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={act.busy || f.events.length === 0}>
            Create webhook
          </button>
        </div>
      </form>
    </Modal>
  );
}

export function Webhooks() {
  const { data, error, reload } = useLoad(() => api<Hook[]>(BASE), []);
  const [open, setOpen] = useState<
    { creating: true } | { created: Hook & { secret: string } } | { deliveries: Hook } | { deleting: Hook } | null
  >(null);
  const act = useAction();
  const setEnabled = (h: Hook, enabled: boolean) =>
    act.run(async () => {
      await api(`${BASE}/${enc(h.id)}`, { method: 'PATCH', body: { enabled } });
      toast(`${h.name} is ${enabled ? 'enabled' : 'disabled'}.`);
      reload();
    });
  return (
    <section class="stack">
      <PageHeader
        title="Webhooks"
        description="Send a signed HTTP request (or call a function) when rows of a table are inserted, updated or deleted."
        actions={
          !error && (
            <Button variant="primary" icon={Plus} onClick={() => setOpen({ creating: true })}>
              New webhook
            </Button>
          )
        }
      />
      <LoadState error={error} what="Webhooks" endpoint={`GET ${BASE}`}>
        <ErrorBox error={act.error} />
        {data !== null && (
          <Grid<Hook>
            label="Webhooks"
            rows={data}
            rowKey={(h) => h.id}
            empty={
              <EmptyState
                icon={WebhookIcon}
                title="No webhooks yet"
                action={
                  <Button variant="primary" icon={Plus} onClick={() => setOpen({ creating: true })}>
                    Create a webhook
                  </Button>
                }
              >
                Tell another service about new orders, sign-ups or any change to a table, with a signature it can
                verify.
              </EmptyState>
            }
            columns={[
              { key: 'name', label: 'Name', cell: (h) => h.name },
              { key: 'table', label: 'Table', cell: (h) => h.table },
              { key: 'events', label: 'Events', cell: (h) => h.events.join(' ') },
              { key: 'columns', label: 'UPDATE of', cell: (h) => h.columns?.join(', ') ?? 'any column' },
              {
                key: 'target',
                label: 'Sends to',
                cell: (h) => (h.url ? <code>{h.url}</code> : `function ${h.functionSlug ?? ''}`),
              },
              {
                key: 'enabled',
                label: 'Enabled',
                cell: (h) => (
                  <input
                    type="checkbox"
                    role="switch"
                    aria-label={`Enabled: ${h.name}`}
                    checked={h.enabled}
                    disabled={act.busy}
                    onChange={(e) => void setEnabled(h, e.currentTarget.checked)}
                  />
                ),
              },
            ]}
            actions={(h) => (
              <>
                <button
                  type="button"
                  class="ghost"
                  aria-label={`Deliveries of ${h.name}`}
                  onClick={() => setOpen({ deliveries: h })}
                >
                  Deliveries
                </button>
                <button
                  type="button"
                  class="ghost danger"
                  aria-label={`Delete webhook ${h.name}`}
                  onClick={() => setOpen({ deleting: h })}
                >
                  Delete
                </button>
              </>
            )}
          />
        )}
      </LoadState>
      {open && 'creating' in open && (
        <CreateHook onClose={() => setOpen(null)} onCreated={(h) => (setOpen({ created: h }), reload())} />
      )}
      {open && 'created' in open && <Secret hook={open.created} onClose={() => setOpen(null)} />}
      {open && 'deliveries' in open && <Deliveries hook={open.deliveries} onClose={() => setOpen(null)} />}
      {open && 'deleting' in open && (
        <Confirm
          what="webhook"
          name={open.deleting.name}
          onConfirm={() => api(`${BASE}/${enc(open.deleting.id)}`, { method: 'DELETE' }).then(reload)}
          onClose={() => setOpen(null)}
        />
      )}
    </section>
  );
}
