// Shows the SQL a change will run, and runs exactly that when the user says so.
import { ErrorBox, Modal, useAction } from '../ui';
import { runSql } from './sql';

export function SqlConfirm(props: { title: string; sql: string; onClose: () => void; onDone: () => void }) {
  const act = useAction();
  return (
    <Modal title={props.title} onClose={props.onClose}>
      <p>This SQL will run, in one transaction:</p>
      <pre class="snippet" aria-label="SQL to run">
        {props.sql}
      </pre>
      <ErrorBox error={act.error} />
      <div class="actions">
        <button
          type="button"
          class="primary"
          disabled={act.busy}
          onClick={async () => (await act.run(() => runSql(props.sql))) && props.onDone()}
        >
          Run SQL
        </button>
        <button type="button" class="ghost" onClick={props.onClose}>
          Cancel
        </button>
      </div>
    </Modal>
  );
}
