// API keys and connection snippets: this instance's URL and anon key to copy, the admin key you
// signed in with (hidden until asked), and ready-to-paste code for @insforge/sdk, postgrest-js,
// curl and the MCP clients, filled in with this server's URL and key.
import { useState } from 'preact/hooks';
import { api, session } from '../api';
import { Eye, EyeOff, KeyRound, Link, Lock } from '../components/icons';
import { Snippet } from '../components/snippet';
import { Button, Card, CopyButton, ErrorBox, LinkTabs, PageHeader, Skeleton, useLoad } from '../ui';
import { McpConfigs } from './mcp-config';

const TABS = [
  { id: 'sdk', label: '@insforge/sdk' },
  { id: 'postgrest', label: 'postgrest-js' },
  { id: 'curl', label: 'curl' },
  { id: 'mcp', label: 'AI agents (MCP)' },
] as const;

function KeyRow({ label, value, what }: { label: string; value: string | null; what: string }) {
  return (
    <div class="copyfield">
      {value === null ? (
        <Skeleton width="100%" />
      ) : (
        <code class="url" aria-label={label}>
          {value}
        </code>
      )}
      {value !== null && <CopyButton text={value} label="Copy" what={what} />}
    </div>
  );
}

function AdminKey() {
  const [shown, setShown] = useState(false);
  const key = session.key() ?? '';
  return (
    <div class="copyfield">
      <code class="url" aria-label="Admin key value">
        {shown ? key : `${key.slice(0, 5)}${'•'.repeat(24)}`}
      </code>
      <Button icon={shown ? EyeOff : Eye} onClick={() => setShown(!shown)}>
        {shown ? 'Hide' : 'Reveal'}
      </Button>
      <CopyButton text={key} label="Copy" what="Admin key" />
    </div>
  );
}

function snippets(
  base: string,
  anon: string,
): Record<'sdk' | 'postgrest' | 'curl', Array<{ title: string; code: string; note?: string }>> {
  return {
    sdk: [
      { title: 'Install', code: 'npm install @insforge/sdk' },
      {
        title: '@insforge/sdk',
        note: 'Sign users in, then read and write as them: row-level security decides what each one sees.',
        code: `import { createClient } from '@insforge/sdk';

const client = createClient({ baseUrl: '${base}', anonKey: '${anon}' });

await client.auth.signUp({ email: 'ada@example.com', password: 'a long password' });
const { data, error } = await client.database.from('notes').select('*').limit(20);
await client.storage.from('files').upload('hello.txt', new Blob(['hi']));
const reply = await client.functions.invoke('hello', { body: { name: 'Ada' } });`,
      },
    ],
    postgrest: [
      { title: 'Install', code: 'npm install @supabase/postgrest-js' },
      {
        title: 'postgrest-js',
        note: "Plinth speaks PostgREST's dialect at /api/db.",
        code: `import { PostgrestClient } from '@supabase/postgrest-js';

const db = new PostgrestClient('${base}/api/db', { headers: { apikey: '${anon}' } });
const { data, error } = await db.from('notes').select('*').order('created_at').range(0, 19);`,
      },
    ],
    curl: [
      {
        title: 'curl',
        code: `# Read rows (anon: row-level security applies)
curl '${base}/api/database/records/notes?limit=20' -H 'apikey: ${anon}'

# Sign up, then use the access token it answers
curl -X POST '${base}/api/auth/users' -H 'content-type: application/json' \\
  -d '{"email": "ada@example.com", "password": "a long password"}'

# Health
curl '${base}/api/health'`,
      },
    ],
  };
}

export function Connect({ params }: { params: string[] }) {
  const tab = TABS.find((t) => t.id === params[0])?.id ?? 'sdk';
  const key = useLoad(() => api<{ anonKey: string; header: string }>('/api/keys/anon'), []);
  const base = location.origin;
  const anon = key.data?.anonKey ?? '<anon key>';
  return (
    <section class="stack loose">
      <PageHeader
        title="API keys & connect"
        description="What an app or an agent needs to talk to this project: its URL, its keys and code to paste, filled in for this server."
      />
      <ErrorBox error={key.error} />
      <div class="two">
        <Card title="Project URL" label="Project URL">
          <p class="muted">Every API is under this address.</p>
          <KeyRow label="Project URL" value={base} what="Project URL" />
        </Card>
        <Card title="Anon key" label="Anon key">
          <p class="muted">
            Public: put it in browser and mobile apps (header {key.data?.header ?? 'apikey'}). Row-level security
            decides what it can read and write.
          </p>
          <KeyRow label="Anon key value" value={key.data?.anonKey ?? (key.error ? '' : null)} what="Anon key" />
        </Card>
      </div>
      <Card title="Admin key" label="Admin key">
        <p class="muted">
          The key you signed in with. Servers and agents only: it bypasses row-level security. Keep it in an environment
          variable such as PLINTH_ADMIN_KEY, never in a committed file.
        </p>
        <AdminKey />
      </Card>
      <div>
        <LinkTabs
          label="Client"
          current={`/connect/${tab}`}
          tabs={TABS.map((t) => ({ href: `/connect/${t.id}`, label: t.label }))}
        />
        <div class="stack loose">
          {tab === 'mcp' ? (
            <McpConfigs />
          ) : (
            snippets(base, anon)[tab].map((s) => (
              <Snippet
                key={s.title}
                title={s.title}
                code={s.code}
                note={s.note}
                label={s.title === 'Install' ? `Install ${TABS.find((t) => t.id === tab)!.label}` : undefined}
              />
            ))
          )}
        </div>
      </div>
    </section>
  );
}

export { KeyRound, Link, Lock };
