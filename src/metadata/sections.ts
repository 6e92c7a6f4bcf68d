// The sections of GET /api/metadata, one per area, in InsForge's shape where it has one
// (@insforge/mcp's get-backend-metadata: auth, database, storage, functions, realtime).
import type { Queryable } from '../db/types.js';
import type { MetadataSection } from './service.js';
import { readTables } from './tables.js';

const GB = 1024 ** 3;
const gb = (bytes: number) => Math.round((bytes / GB) * 1e6) / 1e6;

/** auth: what GET /api/auth/public-config says. */
export function authSection(read: () => unknown): MetadataSection {
  return { name: 'auth', read: async () => read() };
}

/** database: every table of public in detail, and the size of the database. */
export function databaseSection(db: Queryable, realtimeTrigger: string): MetadataSection {
  return {
    name: 'database',
    async read() {
      const tables = await readTables(db, realtimeTrigger);
      const { rows } = await db.query<{ bytes: number }>('select pg_database_size(current_database()) as bytes');
      return {
        tables,
        totalSizeInGB: gb(Number(rows[0]?.bytes ?? 0)),
        hint: 'recordCount is an estimate from the statistics; GET /api/metadata/{table} describes one table.',
      };
    },
  };
}

/** storage: buckets with how many objects they hold and their bytes. */
export function storageSection(db: Queryable): MetadataSection {
  return {
    name: 'storage',
    async read() {
      const { rows } = await db.query<{
        name: string;
        public: boolean;
        createdAt: Date | string;
        objectCount: number;
        sizeBytes: number;
      }>(
        `select b.name, b.is_public as public, b.created_at as "createdAt", count(o.key)::int as "objectCount", coalesce(sum(o.size), 0)::bigint as "sizeBytes"
           from storage.buckets b left join storage.objects o on o.bucket = b.name group by b.name order by b.name`,
      );
      const buckets = rows.map((b) => ({
        ...b,
        createdAt: new Date(b.createdAt).toISOString(),
        sizeBytes: Number(b.sizeBytes),
      }));
      return { buckets, totalSizeInGB: gb(buckets.reduce((n, b) => n + b.sizeBytes, 0)) };
    },
  };
}

/** functions: slug, name, description and status of each. */
export function functionsSection(
  list: () => Promise<Array<{ slug: string; name: string; description: string; status: string }>>,
): MetadataSection {
  return {
    name: 'functions',
    read: async () =>
      (await list()).map((f) => ({ slug: f.slug, name: f.name, description: f.description || null, status: f.status })),
  };
}

/** schedules: name, cron, zone, state, target kind and the next run of each. */
export function schedulesSection(
  list: () => Promise<
    Array<{
      id: string;
      name: string;
      cronSchedule: string;
      timezone: string;
      enabled: boolean;
      functionUrl: string | null;
      functionSlug: string | null;
      nextRunAt: string | null;
    }>
  >,
): MetadataSection {
  return {
    name: 'schedules',
    read: async () =>
      (await list()).map((s) => ({
        id: s.id,
        name: s.name,
        cronSchedule: s.cronSchedule,
        timezone: s.timezone,
        enabled: s.enabled,
        target: s.functionSlug ? 'function' : s.functionUrl ? 'http' : 'sql',
        nextRunAt: s.nextRunAt,
      })),
  };
}

const POLICY = `select p.polname as "policyName", 'messages' as "tableName",
    case p.polcmd when 'r' then 'SELECT' when 'a' then 'INSERT' when 'w' then 'UPDATE' when 'd' then 'DELETE' else 'ALL' end as command,
    case when p.polroles = '{0}' then array['public'] else array(select r.rolname::text from pg_roles r where r.oid = any (p.polroles) order by 1) end as roles,
    pg_get_expr(p.polqual, p.polrelid) as using, pg_get_expr(p.polwithcheck, p.polrelid) as "withCheck"
  from pg_policy p where p.polrelid = 'realtime.messages'::regclass order by p.polname`;

/** realtime: the channel patterns, the policies on realtime.messages, the tables whose changes are published. */
export function realtimeSection(db: Queryable, realtimeTrigger: string): MetadataSection {
  return {
    name: 'realtime',
    async read() {
      const channels = await db.query<Record<string, unknown>>(
        `select id, pattern, description, null as "webhookUrls", enabled, created_at as "createdAt", created_at as "updatedAt" from realtime.channels order by pattern`,
      );
      const policies = (await db.query<{ command: string }>(POLICY)).rows;
      const tables = await db.query<{ name: string }>(
        `select c.relname as name from pg_trigger t join pg_class c on c.oid = t.tgrelid
          where t.tgname = $1 and c.relnamespace = 'public'::regnamespace order by 1`,
        [realtimeTrigger],
      );
      return {
        channels: channels.rows.map((c) => ({
          ...c,
          createdAt: new Date(String(c.createdAt)).toISOString(),
          updatedAt: new Date(String(c.updatedAt)).toISOString(),
        })),
        permissions: {
          subscribe: { policies: policies.filter((p) => p.command === 'SELECT' || p.command === 'ALL') },
          publish: { policies: policies.filter((p) => p.command === 'INSERT' || p.command === 'ALL') },
        },
        tables: tables.rows.map((r) => r.name),
      };
    },
  };
}
