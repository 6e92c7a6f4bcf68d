import { Readable } from 'node:stream';
import { type Static, Type } from 'typebox';
import { tool } from '../types.js';
import { CreateFunction, FunctionSlug, UpdateFunction } from '../../functions/schemas.js';
import { table, truncate } from '../format.js';
import type { FunctionRecord } from '../../functions/store.js';

const Slug = FunctionSlug;
// The inputs of the HTTP routes (functions/schemas.ts); extra arguments are ignored, as before.
const CreateInput = Type.Object(CreateFunction.properties);
const UpdateInput = Type.Object({ slug: Slug, ...UpdateFunction.properties });

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
  tool<Static<typeof CreateInput>>({
    name: 'create-function',
    description:
      'Create a serverless function (TypeScript or JavaScript on Deno). The code is checked on save (syntax, an entry: default export, handler, module.exports or Deno.serve). ' +
      'It runs at POST /functions/{slug}; it sees the caller in x-plinth-role / x-plinth-user-id headers and its secrets, INSFORGE_BASE_URL and ANON_KEY in Deno.env. ' +
      "It may import packages; to read and write as the caller (RLS applies): import { createClient } from 'npm:@insforge/sdk'; " +
      "createClient({ baseUrl: Deno.env.get('INSFORGE_BASE_URL'), edgeFunctionToken: req.headers.get('Authorization')?.replace('Bearer ', '') }).",
    input: CreateInput,
    readOnly: false,
    run: async (a, ctx) => {
      const f = await ctx.services.functions.create(a);
      return `Function "${f.slug}" created (${f.status}). Call it with invoke-function or POST ${ctx.baseUrl}/functions/${f.slug}.`;
    },
  }),
  tool<Static<typeof UpdateInput>>({
    name: 'update-function',
    description:
      "Change a function's code, name, description or status (draft stops it from running). New code is checked as on create (it may import packages, e.g. npm:@insforge/sdk) and replaces the running version only when it loads.",
    input: UpdateInput,
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
    description:
      'Run a function as the admin and answer its status, content type and body (cut when long). The function sees x-plinth-role: admin.',
    input: Type.Object({
      slug: Slug,
      method: Type.Union(
        ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((m) => Type.Literal(m)),
        { default: 'POST' },
      ),
      path: Type.String({
        default: '',
        maxLength: 2048,
        description: 'Sub-path and query after /functions/{slug}, e.g. "/items?limit=5"',
      }),
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
      return truncate(
        `status ${res.status}, content-type ${String(res.headers['content-type'] ?? '')}\n\n${body.toString('utf8')}`,
        20_000,
      );
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
