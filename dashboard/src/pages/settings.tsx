// Settings: the configuration the server runs with (GET /api/admin/config, secrets hidden), each
// variable with what it does, read from the README's table at build time so the two never
// disagree; auth's public configuration and whether AI is configured.
import { useState } from 'preact/hooks';
import readme from '../../../README.md?raw';
import { api } from '../api';
import { aiStatus } from '../lib/ai-status';
import { Grid } from '../grid/grid';
import { Badge, Card, ErrorBox, PageHeader, SkeletonLines, cellText, useLoad } from '../ui';

interface EnvVar {
  name: string;
  def: string;
  what: string;
}

/** The rows of the README's environment table: | `NAME` | default | what |. */
export function envVars(md: string): EnvVar[] {
  const out: EnvVar[] = [];
  for (const line of md.split('\n')) {
    const m = /^\| (`[A-Z][A-Z0-9_<>]*`(?:, `[A-Z][A-Z0-9_<>]*`)*) \| ([^|]*) \| (.*) \|$/.exec(line);
    if (m)
      out.push({
        name: m[1]!.replace(/`/g, ''),
        def: m[2]!.replace(/`/g, '').trim(),
        what: m[3]!.replace(/`|\[([^\]]*)\]\([^)]*\)/g, '$1').trim(),
      });
  }
  return out;
}

/** What the auth settings (GET /api/auth/public-config, in the SDK's names) mean, in words. */
const AUTH_LABELS: Record<string, string> = {
  oAuthProviders: 'Sign-in providers',
  customOAuthProviders: 'OpenID Connect providers',
  requireEmailVerification: 'Email must be verified to sign in',
  passwordMinLength: 'Minimum password length',
  requireNumber: 'Password needs a digit',
  requireLowercase: 'Password needs a lowercase letter',
  requireUppercase: 'Password needs an uppercase letter',
  requireSpecialChar: 'Password needs a symbol',
  verifyEmailMethod: 'Email is verified by',
  resetPasswordMethod: 'Password is reset by',
  disableSignup: 'Sign-up is closed',
};

/** A setting's label: from the map, else its name in words ("someNewKey" reads "Some new key"). */
export function settingLabel(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase();
  return AUTH_LABELS[key] ?? words.charAt(0).toUpperCase() + words.slice(1);
}

/** A setting's value as people read it: Yes/No, a list of badges (or "none"), else the text. */
function SettingValue({ value }: { value: unknown }) {
  if (typeof value === 'boolean') return <Badge tone={value ? 'success' : 'neutral'}>{value ? 'Yes' : 'No'}</Badge>;
  if (Array.isArray(value))
    return value.length ? (
      <span class="row">
        {value.map((v) => (
          <Badge key={String(v)}>{String(v)}</Badge>
        ))}
      </span>
    ) : (
      <span class="muted">none</span>
    );
  return <>{cellText(value)}</>;
}

/** One row of GET /api/admin/config. */
interface ConfigVariable {
  name: string;
  value: string | null;
  source: 'env' | 'default' | 'derived';
  secret: boolean;
  set?: boolean;
  description?: string;
}

/** A variable's README row; OAUTH_ACME_CLIENT_ID reads the row of OAUTH_<NAME>_CLIENT_ID. */
function readmeRows(vars: EnvVar[]): (name: string) => EnvVar | undefined {
  const rows = new Map(vars.flatMap((v) => v.name.split(', ').map((n) => [n, v] as const)));
  return (name) =>
    rows.get(name) ??
    rows.get(
      name.replace(/^OAUTH_[A-Z0-9_]+?_(ISSUER|CLIENT_ID|CLIENT_SECRET|SCOPES|ID_TOKEN_AUDIENCES)$/, 'OAUTH_<NAME>_$1'),
    );
}

/** The value as shown: a secret only as set or not; an unset variable with what that means ("not set: counters in memory"). */
function shownValue(v: ConfigVariable, row: EnvVar | undefined): string {
  if (v.secret) return v.set ? 'set (hidden)' : 'not set';
  if (v.value !== null) return v.value;
  return row?.def.startsWith('unset: ') ? `not set: ${row.def.slice('unset: '.length)}` : 'not set';
}

/** The effective configuration: every variable with its value and source, then the derived facts. */
function EffectiveConfig({ vars }: { vars: EnvVar[] }) {
  const config = useLoad(() => api<{ variables: ConfigVariable[] }>('/api/admin/config'), []);
  // ?q= starts the filter (the Email page links to /settings?q=SMTP).
  const [filter, setFilter] = useState(() => new URLSearchParams(location.search).get('q') ?? '');
  const readme = readmeRows(vars);
  const rows = (config.data?.variables ?? []).filter((v) => v.name.toLowerCase().includes(filter.trim().toLowerCase()));
  return (
    <Card
      title="Effective configuration"
      actions={
        <form class="inline" role="search" onSubmit={(e) => e.preventDefault()}>
          <label for="config-filter">Filter variables</label>
          <input id="config-filter" type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
        </form>
      }
    >
      <p class="muted">
        What this server runs with: each variable's value and whether it came from the environment or its default, then
        facts derived from them. Secrets show only whether they are set.
      </p>
      <ErrorBox error={config.error} />
      {config.data && (
        <Grid<ConfigVariable>
          label="Effective configuration"
          rows={rows}
          rowKey={(v) => v.name}
          empty="No variable matches."
          columns={[
            { key: 'name', label: 'Variable', cell: (v) => <code>{v.name}</code> },
            {
              key: 'value',
              label: 'Value',
              cell: (v) => shownValue(v, readme(v.name)),
              cellClass: (v) => (v.secret || v.value === null ? 'null' : undefined),
            },
            { key: 'source', label: 'Source', cell: (v) => v.source },
            { key: 'what', label: 'What it does', cell: (v) => v.description ?? readme(v.name)?.what ?? '' },
          ]}
        />
      )}
    </Card>
  );
}

export function Settings() {
  const auth = useLoad(() => api<Record<string, unknown>>('/api/auth/public-config'), []);
  const ai = useLoad(aiStatus, []);
  const vars = envVars(readme);
  return (
    <section class="stack loose">
      <PageHeader
        title="Settings"
        description="Plinth is configured by environment variables, read at start: change them where the server runs, then restart it. Secrets are never shown here."
      />
      <div class="two">
        <Card title="Authentication (effective)">
          <ErrorBox error={auth.error} />
          {!auth.data && !auth.error && <SkeletonLines lines={4} label="Loading the authentication settings" />}
          {auth.data && (
            <Grid<[string, unknown]>
              label="Authentication settings"
              rows={Object.entries(auth.data)}
              rowKey={([k]) => k}
              columns={[
                { key: 'k', label: 'Setting', cell: ([k]) => <span title={k}>{settingLabel(k)}</span> },
                { key: 'v', label: 'Value', cell: ([, v]) => <SettingValue value={v} /> },
              ]}
            />
          )}
        </Card>
        <Card title="AI gateway">
          <ErrorBox error={ai.error} />
          {!ai.data && !ai.error && <SkeletonLines lines={2} label="Checking the AI gateway" />}
          {ai.data && (
            <p role="status">
              {ai.data.configured ? (
                <>
                  <Badge tone="success">configured</Badge>
                  {ai.data.provider ? ` ${ai.data.provider}` : ''}
                  {ai.data.defaultModel ? `, default model ${ai.data.defaultModel}` : ''}
                </>
              ) : (
                <>
                  <Badge tone="warning">not configured</Badge> {ai.data.message} {ai.data.nextActions}
                </>
              )}
            </p>
          )}
        </Card>
      </div>
      <EffectiveConfig vars={vars} />
    </section>
  );
}
