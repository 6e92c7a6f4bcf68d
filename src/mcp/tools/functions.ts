import { Readable } from 'node:stream';
import { Type } from 'typebox';
import { tool } from '../types.js';
import { table, truncate } from '../format.js';
import type { FunctionRecord } from '../../functions/store.js';

const Slug = Type.String({ minLength: 1, maxLength: 64, description: 'The function slug' });
const Code = Type.String({ minLength: 1, maxLength: 1024 * 1024, description: 'A module: export default async function (req: Request): Promise<Response>' });
const Status = Type.Union([Type.Literal('draft'), Type.Literal('active')]);

const summary = (f: FunctionRecord) => ({ slug: f.slug, name: f.name, status: f.status, updated_at: f.updated_at });

/** Functions: CRUD, invocation and logs through the function service of /api/functions. */
export const functionTools = [
  tool<Record<string, never>>({
    name: 'list-functions',
    description: 'List the serverless functions (slug, name, status).',
    input: Type.Object({}),
    readOnly: true,
    run: async (_a, ctx) => table((await ctx.services.functions.list()).map(summary)),
  }),
  tool<{ slug: string }>({
    name: 'get-function',
    description: "A function's details and code.",
    input: Type.Object({ slug: Slug }),
    readOnly: true,
    run: async ({ slug }, ctx) => {
      const f = await ctx.services.functions.get(slug);
      return `${JSON.stringify(summary(f))}\n\n\`\`\`ts\n${f.code ?? ''}\n\`\`\``;
    },
  }),
  tool<{ name: string; slug?: string; code: string; description?: string; status?: 'draft' | 'active' }>({
    name: 'create-function',
    description:
      'Create a serverless function (TypeScript or JavaScript on Deno). The code is checked on save (syntax, default export). ' +
      'It runs at POST /functions/{slug}; it sees the caller in x-plinth-role / x-plinth-user-id headers and its secrets in Deno.env.',
    input: Type.Object({ name: Type.String({ minLength: 1, maxLength: 128 }), slug: Type.Optional(Slug), code: Code, description: Type.Optional(Type.String({ maxLength: 1000 })), status: Type.Optional(Status) }),
    readOnly: false,
    run: async (a, ctx) => {
      const f = await ctx.services.functions.create(a);
      return `Function "${f.slug}" created (${f.status}). Call it with invoke-function or POST ${ctx.baseUrl}/functions/${f.slug}.`;
    },
  }),
  tool<{ slug: string; name?: string; code?: string; description?: string; status?: 'draft' | 'active' }>({
    name: 'update-function',
    description: "Change a function's code, name, description or status (draft stops it from running).",
    input: Type.Object({ slug: Slug, name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })), code: Type.Optional(Code), description: Type.Optional(Type.String({ maxLength: 1000 })), status: Type.Optional(Status) }),
    readOnly: false,
    run: async ({ slug, ...patch }, ctx) => {
      const f = await ctx.services.functions.update(slug, patch);
      return `Function "${f.slug}" updated (${f.status}).`;
    },
  }),
  tool<{ slug: string }>({
    name: 'delete-function',
    description: 'Delete a function and its versions.',
    input: Type.Object({ slug: Slug }),
    readOnly: false,
    destructive: true,
    run: async ({ slug }, ctx) => {
      await ctx.services.functions.remove(slug);
      return `Function "${slug}" deleted.`;
    },
  }),
  tool<{ slug: string; method: string; path: string; body?: string; headers: Record<string, string> }>({
    name: 'invoke-function',
    description: 'Run a function as the admin and answer its status, content type and body (cut when long). The function sees x-plinth-role: admin.',
    input: Type.Object({
      slug: Slug,
      method: Type.Union(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((m) => Type.Literal(m)), { default: 'POST' }),
      path: Type.String({ default: '', maxLength: 2048, description: 'Sub-path and query after /functions/{slug}, e.g. "/items?limit=5"' }),
      body: Type.Optional(Type.String({ maxLength: 1024 * 1024 })),
      headers: Type.Record(Type.String(), Type.String(), { default: {} }),
    }),
    readOnly: false,
    run: async (a, ctx) => {
      const headers = { 'content-type': 'application/json', ...lower(a.headers), 'x-plinth-role': 'admin' };
      const res = await ctx.services.functions.invoke(a.slug, {
        method: a.method,
        url: `${ctx.baseUrl}/functions/${a.slug}${a.path}`,
        headers,
        body: a.body !== undefined && a.method !== 'GET' ? Readable.from([Buffer.from(a.body)]) : null,
      });
      const body = Buffer.isBuffer(res.body) ? res.body : await collect(res.body);
      return truncate(`status ${res.status}, content-type ${String(res.headers['content-type'] ?? '')}\n\n${body.toString('utf8')}`, 20_000);
    },
  }),
  tool<{ slug: string; limit: number }>({
    name: 'get-function-logs',
    description: "A function's recent console output and errors, newest last.",
    input: Type.Object({ slug: Slug, limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }) }),
    readOnly: true,
    run: async ({ slug, limit }, ctx) => table(await ctx.services.functions.logs(slug, limit)),
  }),
];

function lower(h: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of stream) {
    chunks.push(c as Buffer);
    size += (c as Buffer).length;
    if (size > 100_000) break;
  }
  stream.destroy();
  return Buffer.concat(chunks);
}
