// The auth email templates (/api/email/templates): the three mails with their subject and whether
// they are custom; edit one (subject, text, optional HTML) with a preview filled with sample
// values, save it, or go back to the built-in text. ?edit=<key> opens the editor.
import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { Eye, Pencil, RotateCcw, Save } from '../components/icons';
import { Grid } from '../grid/grid';
import { navigate, useSearch } from '../router';
import { Badge, Button, ConfirmDialog, Dialog, ErrorBox, Field, toast, useAction, useLoad } from '../ui';
import { LoadState } from './notavailable';

const BASE = '/api/email/templates';

interface Template {
  key: string;
  subject: string;
  text: string;
  html: string | null;
  custom: boolean;
  updatedAt: string | null;
}
interface Rendered {
  subject: string;
  text: string;
  html: string | null;
}

const NAMES: Record<string, string> = {
  verification: 'Email verification code',
  'reset-password': 'Password reset code',
  'magic-link': 'Sign-in code (magic link)',
};
const nameOf = (key: string) => NAMES[key] ?? key;

function Preview({ r }: { r: Rendered }) {
  return (
    <section class="stack" aria-label="Preview">
      <h3>Preview, with sample values</h3>
      <p>
        <strong>{r.subject}</strong>
      </p>
      <pre class="snippet wrap">{r.text}</pre>
      {r.html && (
        <>
          <h3>HTML part</h3>
          <pre class="snippet wrap">{r.html}</pre>
        </>
      )}
    </section>
  );
}

function Editor({ t, onClose, onSaved }: { t: Template; onClose: () => void; onSaved: () => void }) {
  const [draft, setDraft] = useState({ subject: t.subject, text: t.text, html: t.html ?? '' });
  const [preview, setPreview] = useState<Rendered | null>(null);
  const [resetting, setResetting] = useState(false);
  const act = useAction();
  const body = () => ({ subject: draft.subject, text: draft.text, html: draft.html.trim() ? draft.html : null });
  const path = `${BASE}/${enc(t.key)}`;
  const save = async (e: Event) => {
    e.preventDefault();
    if (await act.run(() => api(path, { method: 'PUT', body: body() }))) {
      toast(`Saved the template “${nameOf(t.key)}”.`);
      onSaved();
    }
  };
  const showPreview = () =>
    void act.run(async () =>
      setPreview(await api<Rendered>(`${path}/preview`, { method: 'POST', body: { draft: body() } })),
    );
  const set = (k: keyof typeof draft) => (e: Event) =>
    setDraft({ ...draft, [k]: (e.currentTarget as HTMLInputElement).value });
  return (
    <Dialog side title={nameOf(t.key)} label={`Edit template ${nameOf(t.key)}`} onClose={onClose}>
      <form class="stack" onSubmit={save}>
        <p class="muted">
          Placeholders: <code>{'{{code}}'}</code>, <code>{'{{minutes}}'}</code>, <code>{'{{email}}'}</code>. Values are
          HTML-escaped in the HTML part.
        </p>
        <Field id="tpl-subject" label="Subject">
          <input id="tpl-subject" required maxLength={500} value={draft.subject} onInput={set('subject')} />
        </Field>
        <Field id="tpl-text" label="Text">
          <textarea id="tpl-text" required rows={8} maxLength={100_000} value={draft.text} onInput={set('text')} />
        </Field>
        <Field id="tpl-html" label="HTML (optional)" hint="Empty: the mail has only the text part.">
          <textarea
            id="tpl-html"
            rows={6}
            class="mono"
            maxLength={500_000}
            aria-describedby="tpl-html-hint"
            value={draft.html}
            onInput={set('html')}
          />
        </Field>
        {preview && <Preview r={preview} />}
        <ErrorBox error={act.error} />
        <div class="footer">
          {t.custom && (
            <Button variant="ghost danger" icon={RotateCcw} onClick={() => setResetting(true)}>
              Back to built-in
            </Button>
          )}
          <Button icon={Eye} onClick={showPreview} disabled={act.busy}>
            Preview
          </Button>
          <Button type="submit" variant="primary" icon={Save} disabled={act.busy}>
            Save
          </Button>
        </div>
      </form>
      {resetting && (
        <ConfirmDialog
          title="Back to the built-in text"
          confirmLabel="Use the built-in text"
          danger
          onClose={() => setResetting(false)}
          onConfirm={async () => {
            if (await act.run(() => api(path, { method: 'DELETE' }))) {
              toast(`“${nameOf(t.key)}” uses the built-in text again.`);
              setResetting(false);
              onSaved();
            }
          }}
        >
          Your text of <strong>{nameOf(t.key)}</strong> is deleted; the mail goes out with Plinth's built-in text.
        </ConfirmDialog>
      )}
    </Dialog>
  );
}

export function Templates() {
  const { data, error, reload, loading } = useLoad(() => api<Template[]>(BASE), []);
  const edit = useSearch().get('edit');
  const editing = data?.find((t) => t.key === edit);
  const close = () => navigate('/email/templates', { replace: true });
  return (
    <div class="stack">
      <p class="muted">
        The mails Plinth sends when people sign up, reset their password or sign in with a code. Edit one to use your
        own words; sign-in codes are filled in when it is sent.
      </p>
      <LoadState error={error} what="Email templates" endpoint={`GET ${BASE}`}>
        <Grid<Template>
          label="Email templates"
          rows={data ?? []}
          loading={loading}
          rowKey={(t) => t.key}
          columns={[
            { key: 'name', label: 'Template', cell: (t) => nameOf(t.key) },
            { key: 'subject', label: 'Subject', cell: (t) => t.subject },
            {
              key: 'custom',
              label: 'Text',
              cell: (t) => (t.custom ? <Badge tone="accent">custom</Badge> : <Badge>built-in</Badge>),
            },
            {
              key: 'updatedAt',
              label: 'Changed',
              cell: (t) => (t.updatedAt ? new Date(t.updatedAt).toLocaleString() : '–'),
              cellClass: () => 'nowrap',
            },
          ]}
          actions={(t) => (
            <Button
              size="sm"
              icon={Pencil}
              aria-label={`Edit ${nameOf(t.key)}`}
              onClick={() => navigate(`/email/templates?edit=${enc(t.key)}`)}
            >
              Edit
            </Button>
          )}
        />
      </LoadState>
      {editing && <Editor key={editing.key} t={editing} onClose={close} onSaved={() => (close(), reload())} />}
    </div>
  );
}
