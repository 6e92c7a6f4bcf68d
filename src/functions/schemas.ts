// The input of each function operation, declared once: the HTTP routes (/api/functions) and the
// MCP tools (create-function, update-function, …) take these, and the tools' argument types are
// inferred from them (test/mcp/schemas.test.ts keeps the two faces equal).
import { type Static, Type } from 'typebox';
import { SLUG_PATTERN } from './slug.js';

export const FunctionSlug = Type.String({ pattern: SLUG_PATTERN, description: 'The function slug' });
const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
// The code may be up to 1 MiB of UTF-8 (checked after parsing, code.ts); JSON escaping can grow it.
const Code = Type.String({
  minLength: 1,
  description:
    "A module, TypeScript or JavaScript: export default async function (req: Request): Promise<Response>; at most 1 MiB. Packages may be imported (npm:, jsr:, https:; resolved and bundled at deploy), the InsForge SDK first: import { createClient } from 'npm:@insforge/sdk'. " +
    'InsForge and Supabase forms run too: export async function handler(req), module.exports = async function (req), Deno.serve((req) => ...).',
});
const Description = Type.String({ maxLength: 10_000 });
/** The states a function is in; `error` is set by Plinth when the code fails its check. */
export const FunctionStatus = Type.Union([Type.Literal('draft'), Type.Literal('active'), Type.Literal('error')]);

/** POST /api/functions, MCP create-function. */
export const CreateFunction = Type.Object(
  {
    name: Name,
    slug: Type.Optional(Type.String({ pattern: SLUG_PATTERN })),
    code: Code,
    description: Type.Optional(Description),
    status: Type.Optional(Type.Union([Type.Literal('draft'), Type.Literal('active')], { default: 'active' })),
  },
  { additionalProperties: false },
);
export type CreateFunctionInput = Static<typeof CreateFunction>;

/** PUT /api/functions/{slug}, MCP update-function (with the slug). */
export const UpdateFunction = Type.Object(
  {
    name: Type.Optional(Name),
    code: Type.Optional(Code),
    description: Type.Optional(Description),
    status: Type.Optional(FunctionStatus),
  },
  { additionalProperties: false },
);
export type UpdateFunctionInput = Static<typeof UpdateFunction>;
