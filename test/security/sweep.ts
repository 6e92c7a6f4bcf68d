import type { Queryable } from '../../src/db/types.js';

// The catalog sweep of docs/security.md. Every query takes $1, the owner role, and answers one
// row per violation. "Controlled" means owned by a role the owner may act as (itself, anon,
// authenticated: pg_has_role MEMBER), or a schema it may create in. Plinth's schemas are every
// other schema but PostgreSQL's own. "Privileged" code is a function owned by a superuser that
// runs with those rights for someone else: a SECURITY DEFINER function, or the function of a
// trigger or event trigger.

/** Schemas Plinth's migrations make; the sweep finds them (and any new one) in the catalog. */
export const PLINTH_SCHEMAS = [
  'system',
  'auth',
  'realtime',
  'storage',
  'functions',
  'webhooks',
  'email',
  'schedules',
  'ai',
  'mcp',
  'plinth_extensions',
];

/** The one object of Plinth's schemas the owner owns: realtime's rules are policies on it (docs/realtime.md). */
const OWNER_OWNS = `'realtime.messages'::regclass`;

/**
 * Superuser definer functions that run dynamic SQL, each reviewed: what it may build and why
 * that never names an object the owner controls. A new one fails the sweep until it is here.
 */
export const REVIEWED_DYNAMIC_SQL: Record<string, string> = {
  'system.create_extension(text)':
    'creates only an extension name on its allow-list, into schema plinth_extensions (Plinth’s), quoted with %I',
};

const COMMON = `
  ctl_roles as (select oid from pg_roles where pg_has_role($1, oid, 'MEMBER')),
  su_roles as (select oid from pg_roles where rolsuper),
  ctl_ns as (
    select oid, nspname from pg_namespace
     where nspowner in (select oid from ctl_roles) or has_schema_privilege($1, oid, 'CREATE')),
  plinth_ns as (
    select oid, nspname from pg_namespace
     where oid not in (select oid from ctl_ns)
       and nspname not in ('pg_catalog', 'information_schema', 'pg_toast') and nspname !~ '^pg_(toast_)?temp_'),
  ext_objs as (select classid, objid from pg_depend where deptype = 'e'),
  -- Tables, types and functions the owner controls, by oid.
  ctl_rel as (
    select c.oid from pg_class c
     where c.relowner in (select oid from ctl_roles) or c.relnamespace in (select oid from ctl_ns)),
  ctl_type as (
    select t.oid from pg_type t
     where t.typowner in (select oid from ctl_roles) or t.typnamespace in (select oid from ctl_ns)),
  ctl_proc as (
    select p.oid from pg_proc p
     where p.proowner in (select oid from ctl_roles) or p.pronamespace in (select oid from ctl_ns)),
  privileged as (
    select p.oid, p.oid::regprocedure::text as name, p.prosecdef, p.proconfig, p.prosrc, p.prolang, p.prorettype, p.proargtypes
      from pg_proc p
     where p.proowner in (select oid from su_roles)
       and p.pronamespace not in (select oid from pg_namespace where nspname in ('pg_catalog', 'information_schema'))
       and not exists (select 1 from ext_objs e where e.classid = 'pg_proc'::regclass and e.objid = p.oid)
       and (p.prosecdef or p.oid in (select tgfoid from pg_trigger) or p.oid in (select evtfoid from pg_event_trigger)))`;

/** Each rule: a query answering `what` per violation. */
export const CATALOG_SWEEP: Record<string, string> = {
  'the owner owns nothing in Plinth’s schemas (but realtime.messages)': `
    with ${COMMON}
    select format('%s %s is owned by %s', kind, name, pg_get_userbyid(owner)) as what from (
      select 'relation' as kind, c.oid::regclass::text as name, c.relowner as owner, c.relnamespace as ns from pg_class c
       where c.oid <> ${OWNER_OWNS} and not exists (select 1 from pg_index i where i.indexrelid = c.oid and i.indrelid = ${OWNER_OWNS})
      union all select 'function', p.oid::regprocedure::text, p.proowner, p.pronamespace from pg_proc p
      union all select 'type', t.oid::regtype::text, t.typowner, t.typnamespace from pg_type t
       where t.typrelid <> ${OWNER_OWNS} and not (t.typelem <> 0 and exists (select 1 from pg_type e where e.oid = t.typelem and e.typrelid = ${OWNER_OWNS}))
      union all select 'operator', o.oid::regoperator::text, o.oprowner, o.oprnamespace from pg_operator o
      union all select 'collation', c.collname, c.collowner, c.collnamespace from pg_collation c
      union all select 'schema', n.nspname, n.nspowner, n.oid from pg_namespace n
    ) x
    where x.owner in (select oid from ctl_roles) and x.ns in (select oid from plinth_ns)
    order by 1`,

  'the owner may create nothing in Plinth’s schemas': `
    with ${COMMON}
    select format('schema %s: the owner may create in it', n.nspname) as what from pg_namespace n
     where n.nspname = any($2::text[]) and n.oid in (select oid from ctl_ns)
    order by 1`,

  'every definer function pins search_path to Plinth’s schemas, pg_temp last': `
    with ${COMMON}
    select format('search_path of %s: %s', p.oid::regprocedure, coalesce(array_to_string(p.proconfig, ' '), 'not set')) as what
      from pg_proc p
     where p.prosecdef and p.proowner not in (select oid from ctl_roles)
       and not exists (select 1 from ext_objs e where e.classid = 'pg_proc'::regclass and e.objid = p.oid)
       and not coalesce((
         select s ~ '(^|, )pg_temp$'
            and not exists (
              select 1 from unnest(string_to_array(s, ', ')) part
               where part not in ('pg_catalog', 'pg_temp') and part not in (select nspname from plinth_ns))
           from (select substr(c, length('search_path=') + 1) as s from unnest(p.proconfig) c where c like 'search_path=%') x), false)
    order by 1`,

  'no privileged function takes or returns what the owner controls': `
    with ${COMMON}
    select format('arguments of %s: %s', p.name, t.oid::regtype) as what
      from privileged p
      cross join lateral unnest(p.proargtypes::oid[] || array[p.prorettype]) a(t)
      join pg_type t on t.oid = a.t
     where t.oid in (select oid from ctl_type)
        or (t.typtype = 'p' and t.typname not in ('trigger', 'event_trigger', 'void', 'cstring'))
    order by 1`,

  'no privileged function body names what the owner controls': `
    with ${COMMON},
    refs as (
      select p.name, lower(m[1]) as nsp, lower(m[2]) as obj
        from privileged p, regexp_matches(p.prosrc, '([A-Za-z_][A-Za-z0-9_]*)\\s*\\.\\s*([A-Za-z_][A-Za-z0-9_]*)', 'g') m)
    select distinct format('body of %s names %s.%s', r.name, r.nsp, r.obj) as what
      from refs r
     where r.nsp in (select nspname from ctl_ns)
        or exists (select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = r.nsp and c.relname = r.obj and c.oid in (select oid from ctl_rel))
        or exists (select 1 from pg_proc f join pg_namespace n on n.oid = f.pronamespace where n.nspname = r.nsp and f.proname = r.obj and f.oid in (select oid from ctl_proc))
        or exists (select 1 from pg_type y join pg_namespace n on n.oid = y.typnamespace where n.nspname = r.nsp and y.typname = r.obj and y.oid in (select oid from ctl_type))
    order by 1`,

  'no privileged function runs dynamic SQL unless reviewed': `
    with ${COMMON}
    select format('body of %s runs dynamic SQL (EXECUTE)', p.name) as what
      from privileged p
     where p.prolang = (select oid from pg_language where lanname = 'plpgsql')
       and p.prosrc ~* '\\mexecute\\M' and not p.name = any($2::text[])
    order by 1`,

  'no superuser definer function is the trigger of a table the owner controls': `
    with ${COMMON}
    select format('trigger %s on %s runs %s, a superuser''s SECURITY DEFINER function', g.tgname, g.tgrelid::regclass, p.name) as what
      from pg_trigger g join privileged p on p.oid = g.tgfoid
     where p.prosecdef and g.tgrelid in (select oid from ctl_rel)
    order by 1`,

  'no event trigger runs a superuser definer function': `
    with ${COMMON}
    select format('event trigger %s runs %s, a superuser''s SECURITY DEFINER function', e.evtname, p.name) as what
      from pg_event_trigger e join privileged p on p.oid = e.evtfoid
     where p.prosecdef
    order by 1`,

  'nothing of Plinth’s depends on what the owner controls (defaults, checks, views, column types)': `
    with ${COMMON},
    plinth_rel as (
      select c.oid from pg_class c
       where c.relnamespace in (select oid from plinth_ns) and c.relowner not in (select oid from ctl_roles)),
    dependent as (
      select d.*, case d.classid
          when 'pg_class'::regclass then d.objid
          when 'pg_attrdef'::regclass then (select adrelid from pg_attrdef where oid = d.objid)
          when 'pg_constraint'::regclass then (select nullif(conrelid, 0) from pg_constraint where oid = d.objid)
          when 'pg_rewrite'::regclass then (select ev_class from pg_rewrite where oid = d.objid)
          when 'pg_trigger'::regclass then (select tgrelid from pg_trigger where oid = d.objid)
          when 'pg_policy'::regclass then (select polrelid from pg_policy where oid = d.objid)
        end as rel
        from pg_depend d where d.deptype = 'n')
    select distinct format('depend: %s of %s uses %s', pg_describe_object(d.classid, d.objid, d.objsubid), d.rel::regclass, (pg_identify_object(d.refclassid, d.refobjid, d.refobjsubid)).type || ' ' || (pg_identify_object(d.refclassid, d.refobjid, d.refobjsubid)).identity) as what
      from dependent d
     where d.rel in (select oid from plinth_rel)
       and ((d.refclassid = 'pg_class'::regclass and d.refobjid in (select oid from ctl_rel))
         or (d.refclassid = 'pg_type'::regclass and d.refobjid in (select oid from ctl_type))
         or (d.refclassid = 'pg_proc'::regclass and d.refobjid in (select oid from ctl_proc))
         or (d.refclassid = 'pg_operator'::regclass and d.refobjid in (select oid from pg_operator where oprowner in (select oid from ctl_roles))))
    order by 1`,
};

export interface Violation {
  rule: string;
  what: string;
}

/** Runs every rule; also answers Plinth's schemas as the catalog shows them. */
export async function sweep(
  db: Queryable,
  owner: string,
): Promise<{ plinthSchemas: string[]; violations: Violation[] }> {
  const ns = await db.query<{ name: string }>(`with ${COMMON} select nspname as name from plinth_ns order by 1`, [
    owner,
  ]);
  const violations: Violation[] = [];
  for (const [rule, query] of Object.entries(CATALOG_SWEEP)) {
    const extra = rule.startsWith('no privileged function runs dynamic')
      ? Object.keys(REVIEWED_DYNAMIC_SQL)
      : PLINTH_SCHEMAS;
    const n = (query.match(/\$2/g) ?? []).length;
    const { rows } = await db.query<{ what: string }>(query, n ? [owner, extra] : [owner]);
    for (const r of rows) violations.push({ rule, what: r.what });
  }
  return { plinthSchemas: ns.rows.map((r) => r.name), violations };
}
