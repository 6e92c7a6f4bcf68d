// Security rules: who can reach what, policies that let everyone in, definer functions,
// public buckets, code that calls private addresses.
import { finding, lit, q, type Finding, type Rule } from './types.js';
import { privateUrls } from './urls.js';

const PERSONAL =
  /(^|_)(e?mail|phone|mobile|address|street|zip|postcode|postal|birth|dob|ssn|passport|first_?name|last_?name|full_?name|surname|ip_address|iban|salary|gender|national_id|tax_id)($|_)/i;

/** The uuid column that names a row's owner, if one does: the fix SQL scopes rows by it. */
const OWNER_COLUMN = `(select a.attname from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
   and a.atttypid = 'uuid'::regtype and a.attname in ('user_id', 'owner_id', 'owner', 'author_id', 'created_by') order by a.attnum limit 1)`;

const ownerPolicy = (table: string, owner: string | null) =>
  owner
    ? `create policy ${q(`${table}_owner`)} on public.${q(table)} for all to authenticated using (${q(owner)} = (select auth.uid())) with check (${q(owner)} = (select auth.uid()));`
    : `create policy ${q(`${table}_no_access`)} on public.${q(table)} as restrictive for all to anon, authenticated using (false);`;

export const rlsDisabled: Rule = {
  id: 'rls_disabled_reachable',
  category: 'security',
  async run({ db }) {
    const { rows } = await db.query<{ name: string }>(
      `select c.relname as name from pg_class c
        where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') and not c.relrowsecurity
          and (has_table_privilege('anon', c.oid, 'select, insert, update, delete') or has_table_privilege('authenticated', c.oid, 'select, insert, update, delete'))
        order by 1`,
    );
    return rows.map((r) =>
      finding(rlsDisabled, {
        severity: 'critical',
        object: { type: 'table', name: `public.${r.name}` },
        title: `Row-level security is off on "${r.name}", which the anon key and users can reach`,
        why: 'Anyone holding the anon key (it ships in the app) can read and change every row.',
        fixSql: `alter table public.${q(r.name)} enable row level security;`,
      }),
    );
  },
};

export const openPolicy: Rule = {
  id: 'policy_true_on_personal_data',
  category: 'security',
  async run({ db }) {
    const { rows } = await db.query<{
      table: string;
      policy: string;
      cmd: string;
      columns: string[];
      owner: string | null;
    }>(
      `select c.relname as table, p.polname as policy, p.polcmd::text as cmd, ${OWNER_COLUMN} as owner,
          array(select a.attname::text from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped) as columns
         from pg_policy p join pg_class c on c.oid = p.polrelid
        where c.relnamespace = 'public'::regnamespace and p.polpermissive
          and (pg_get_expr(p.polqual, p.polrelid) = 'true' or (p.polqual is null and pg_get_expr(p.polwithcheck, p.polrelid) = 'true'))
          and (p.polroles = '{0}' or p.polroles && array[to_regrole('anon'), to_regrole('authenticated')]::oid[])
        order by 1, 2`,
    );
    const out: Finding[] = [];
    for (const r of rows) {
      const personal = r.columns.filter((c) => PERSONAL.test(c));
      if (!personal.length) continue;
      const cmd = { r: 'select', a: 'insert', w: 'update', d: 'delete' }[r.cmd] ?? 'all';
      const scope = r.owner ? `${q(r.owner)} = (select auth.uid())` : 'false';
      const clause =
        cmd === 'insert'
          ? `with check (${scope})`
          : cmd === 'select' || cmd === 'delete'
            ? `using (${scope})`
            : `using (${scope}) with check (${scope})`;
      out.push(
        finding(openPolicy, {
          severity: 'critical',
          object: { type: 'policy', name: `public.${r.table}.${r.policy}` },
          title: `Policy "${r.policy}" lets everyone ${cmd === 'all' ? 'do anything with' : `${cmd}`} rows of "${r.table}", which holds personal data (${personal.join(', ')})`,
          why: 'USING (true) for anon or all users is the most common cause of leaked personal data: every row is readable with the public anon key.',
          fixSql: `drop policy ${q(r.policy)} on public.${q(r.table)};\ncreate policy ${q(r.policy)} on public.${q(r.table)} for ${cmd} to authenticated ${clause};`,
        }),
      );
    }
    return out;
  },
};

export const rlsNoPolicy: Rule = {
  id: 'rls_enabled_no_policy',
  category: 'security',
  async run({ db }) {
    const { rows } = await db.query<{ name: string; owner: string | null }>(
      `select c.relname as name, ${OWNER_COLUMN} as owner from pg_class c
        where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') and c.relrowsecurity
          and not exists (select 1 from pg_policy p where p.polrelid = c.oid) order by 1`,
    );
    return rows.map((r) =>
      finding(rlsNoPolicy, {
        severity: 'warning',
        object: { type: 'table', name: `public.${r.name}` },
        title: `Row-level security is on for "${r.name}" but it has no policy`,
        why: 'Users and the anon key see no rows at all: usually a policy was forgotten, and the app looks broken or falls back to the admin key.',
        fixSql: ownerPolicy(r.name, r.owner),
      }),
    );
  },
};

export const definerSearchPath: Rule = {
  id: 'security_definer_search_path',
  category: 'security',
  async run({ db }) {
    const { rows } = await db.query<{ name: string; args: string }>(
      `select p.proname as name, pg_get_function_identity_arguments(p.oid) as args from pg_proc p
        where p.pronamespace = 'public'::regnamespace and p.prosecdef
          and not exists (select 1 from unnest(coalesce(p.proconfig, '{}')) s where s like 'search_path=%') order by 1`,
    );
    return rows.map((r) =>
      finding(definerSearchPath, {
        severity: 'warning',
        object: { type: 'function', name: `public.${r.name}(${r.args})` },
        title: `SECURITY DEFINER function public.${r.name}(${r.args}) has no fixed search_path`,
        why: "It runs with its owner's rights; a caller who can create objects earlier in the search_path can make it call theirs.",
        fixSql: `alter function public.${q(r.name)}(${r.args}) set search_path = pg_catalog, public;`,
      }),
    );
  },
};

export const publicBucket: Rule = {
  id: 'public_bucket',
  category: 'security',
  async run({ db }) {
    const { rows } = await db.query<{ name: string }>('select name from storage.buckets where is_public order by 1');
    return rows.map((r) =>
      finding(publicBucket, {
        severity: 'info',
        object: { type: 'bucket', name: r.name },
        title: `Bucket "${r.name}" is public`,
        why: 'Anyone who has or guesses an object URL can download it without a key; fine for assets, not for user files.',
        fixSql: `update storage.buckets set is_public = false where name = ${lit(r.name)};`,
      }),
    );
  },
};

export const privateUrl: Rule = {
  id: 'private_url_call',
  category: 'security',
  async run({ urlSources }) {
    const out: Finding[] = [];
    for (const source of urlSources) {
      for (const item of await source.list()) {
        const urls = privateUrls(item.text);
        if (!urls.length) continue;
        out.push(
          finding(privateUrl, {
            severity: 'warning',
            object: { type: source.kind, name: item.name },
            title: `The ${source.kind} "${item.name}" calls a private address (${urls.slice(0, 3).join(', ')})`,
            why: 'Requests to localhost, the private network or the cloud metadata address reach services that were never meant to be exposed (SSRF).',
            fixSql: null,
          }),
        );
      }
    }
    return out;
  },
};

export const SECURITY_RULES: Rule[] = [
  rlsDisabled,
  openPolicy,
  rlsNoPolicy,
  definerSearchPath,
  publicBucket,
  privateUrl,
];
