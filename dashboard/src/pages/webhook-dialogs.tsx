// A webhook's dialogs: its signing secret, shown the one time the API gives it, and its deliveries
// with redelivery.
import { api, enc } from '../api';
import { Grid } from '../grid/grid';
import { CopyButton, ErrorBox, Modal, cellText, toast, useAction, useLoad } from '../ui';
import { LoadState } from './notavailable';

export const BASE = '/api/database/webhooks';

export interface Hook {
  id: string;
  name: string;
  table: string;
  events: string[];
  columns: string[] | null;
  url: string | null;
  functionSlug: string | null;
  enabled: boolean;
}
export interface Delivery {
  id: string;
  event: string;
  status: string;
  attempts: number;
  responseStatus: number | null;
  error: string | null;
  createdAt: string;
}

/** The signing secret, the one time the API gives it. */
export function Secret({ hook, onClose }: { hook: Hook & { secret: string }; onClose: () => void }) {
  return (
    <Modal title={`Signing secret of ${hook.name}`} onClose={onClose}>
      <div class="stack">
        <p class="warn" role="status">
          Webhook {hook.name} created. Copy its signing secret now: <strong>you will not see it again.</strong>{' '}
          Receivers verify each delivery's <code>webhook-signature</code> with it.
        </p>
        <label for="wh-secret">Signing secret</label>
        <input id="wh-secret" class="mono" readOnly value={hook.secret} onFocus={(e) => e.currentTarget.select()} />
        <div class="actions">
          <CopyButton text={hook.secret} label="Copy secret" />
          <button type="button" class="primary" onClick={onClose}>
            I have copied it
          </button>
        </div>
      </div>
    </Modal>
  );
}

export function Deliveries({ hook, onClose }: { hook: Hook; onClose: () => void }) {
  const path = `${BASE}/${enc(hook.id)}/deliveries`;
  const { data, error, reload } = useLoad(() => api<Delivery[]>(path), [path]);
  const act = useAction();
  return (
    <Modal title={`Deliveries of ${hook.name}`} onClose={onClose}>
      <LoadState error={error} what="The delivery log" endpoint={`GET ${path}`}>
        <div class="actions">
          <button type="button" onClick={reload}>
            Refresh
          </button>
        </div>
        {data !== null && (
          <Grid<Delivery>
            label="Deliveries"
            rows={data}
            rowKey={(d) => d.id}
            empty="No deliveries yet."
            columns={[
              {
                key: 'createdAt',
                label: 'Created',
                cell: (d) => new Date(d.createdAt).toLocaleString(),
                cellClass: () => 'nowrap',
              },
              { key: 'event', label: 'Event', cell: (d) => d.event },
              {
                key: 'status',
                label: 'Status',
                cell: (d) => <span class={d.status === 'failed' ? 'badge bad' : 'badge'}>{d.status}</span>,
              },
              { key: 'attempts', label: 'Attempts', cell: (d) => d.attempts, cellClass: () => 'num' },
              {
                key: 'responseStatus',
                label: 'Response',
                cell: (d) => cellText(d.responseStatus),
                cellClass: () => 'num',
              },
              { key: 'error', label: 'Error', cell: (d) => d.error ?? '' },
            ]}
            actions={(d) => (
              <button
                type="button"
                class="ghost"
                aria-label={`Redeliver ${d.id}`}
                onClick={() =>
                  void act.run(async () => {
                    await api(`${path}/${enc(d.id)}/redeliver`, { method: 'POST' });
                    toast('Delivery queued again.');
                    reload();
                  })
                }
              >
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
