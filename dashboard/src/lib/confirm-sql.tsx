// Shows the SQL a change will run, and runs exactly that when the user says so; a toast says it
// was applied (`done`, or the dialog's title).
import { ErrorBox, Modal, toast, useAction } from '../ui';
import { runSql } from './sql';

export function SqlConfirm(props: {
  title: string;
  sql: string;
  done?: string;
  onClose: () => void;
  onDone: () => void;
}) {
  const act = useAction();
  const run = async () => {
    if (!(await act.run(() => runSql(props.sql)))) return;
    toast(props.done ?? `Applied: ${props.title.charAt(0).toLowerCase()}${props.title.slice(1)}.`);
    props.onDone();
  };
  return (
    <Modal title={props.title} onClose={props.onClose}>
      <p>This SQL will run, in one transaction:</p>
      <pre class="snippet" aria-label="SQL to run">
        {props.sql}
      </pre>
      <ErrorBox error={act.error} />
      <div class="actions">
        <button type="button" class="primary" disabled={act.busy} onClick={() => void run()}>
          Run SQL
        </button>
        <button type="button" class="ghost" onClick={props.onClose}>
          Cancel
        </button>
      </div>
    </Modal>
  );
}
