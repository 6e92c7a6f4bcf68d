// docs/api.md, the API reference in the repository, rendered from the OpenAPI document that the
// routes' own schemas make (GET /api/openapi.json). `npm run docs:api` writes it; a test fails
// when the file and the routes differ.

interface Schema {
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  const?: unknown;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  required?: string[];
  description?: string;
}

interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: Schema; description?: string }>;
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>;
}

export interface OpenApiDocument {
  paths?: Record<string, Record<string, Operation>>;
}

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'];

/** A table cell: one line, pipes escaped. */
const cell = (s: string) => s.replace(/\s+/g, ' ').replace(/\|/g, '\\|').trim();

/** A short type name: `string`, `integer`, `array of string`, `"a" or "b"`. */
export function typeOf(s: Schema | undefined): string {
  if (!s) return 'any';
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' or ');
  const alts = s.anyOf ?? s.oneOf;
  if (alts) return [...new Set(alts.map(typeOf))].join(' or ');
  const t = Array.isArray(s.type) ? s.type.join(' or ') : s.type;
  if (t === 'array') return `array of ${typeOf(s.items)}`;
  if (t === undefined) return s.properties ? 'object' : 'any';
  return s.format ? `${t} (${s.format})` : t;
}

function fieldRows(s: Schema | undefined): string[] {
  const target = s?.type === 'array' ? s.items : s;
  if (!target?.properties) return [];
  const required = new Set(target.required ?? []);
  return Object.entries(target.properties).map(
    ([name, f]) =>
      `| \`${name}\` | ${cell(typeOf(f))} | ${required.has(name) ? 'yes' : 'no'} | ${cell(f.description ?? '')} |`,
  );
}

function responseLine(status: string, r: NonNullable<Operation['responses']>[string]): string {
  const [type, media] = Object.entries(r.content ?? {})[0] ?? [];
  const s = media?.schema;
  const target = s?.type === 'array' ? s.items : s;
  const fields = target?.properties
    ? `: ${Object.keys(target.properties)
        .map((k) => `\`${k}\``)
        .join(', ')}`
    : '';
  const shape = s ? ` ${typeOf(s)}${fields}` : '';
  return `- \`${status}\`${type && type !== 'application/json' ? ` (${type})` : ''}${shape}`;
}

function renderOperation(method: string, path: string, op: Operation): string {
  const out = [`### \`${method.toUpperCase()} ${path}\``, ''];
  if (op.summary) out.push(cell(op.summary), '');
  if (op.description) out.push(op.description.trim(), '');
  const params = op.parameters ?? [];
  if (params.length) {
    out.push('| parameter | in | type | required | description |', '|---|---|---|---|---|');
    for (const p of params)
      out.push(
        `| \`${p.name}\` | ${p.in} | ${cell(typeOf(p.schema))} | ${p.required ? 'yes' : 'no'} | ${cell(p.description ?? p.schema?.description ?? '')} |`,
      );
    out.push('');
  }
  for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
    const rows = fieldRows(media.schema);
    out.push(`Body (\`${type}\`${op.requestBody?.required ? '' : ', optional'}): ${cell(typeOf(media.schema))}`, '');
    if (rows.length) out.push('| field | type | required | description |', '|---|---|---|---|', ...rows, '');
  }
  const responses = Object.entries(op.responses ?? {});
  if (responses.length) out.push('Answers:', '', ...responses.map(([status, r]) => responseLine(status, r)), '');
  return out.join('\n');
}

/** The whole page, grouped by the operations' first tag, in the order the routes register. */
export function renderApiDoc(doc: OpenApiDocument): string {
  const groups = new Map<string, string[]>();
  for (const [path, ops] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = ops[method];
      if (!op) continue;
      const tag = op.tags?.[0] ?? 'other';
      if (!groups.has(tag)) groups.set(tag, []);
      groups.get(tag)!.push(renderOperation(method, path, op));
    }
  }
  const toc = [...groups.keys()].map(
    (tag) =>
      `- [${tag}](#${tag
        .toLowerCase()
        .replace(/[^a-z0-9 _-]/g, '')
        .replace(/ /g, '-')}) (${groups.get(tag)!.length})`,
  );
  const sections = [...groups].map(([tag, ops]) => `## ${tag}\n\n${ops.join('\n')}`);
  return `# API reference

Every endpoint of the Plinth API, with its parameters, body fields and answers. This page is
generated from the OpenAPI document the server serves at \`GET /api/openapi.json\` (built from
the routes' own schemas) by \`npm run docs:api\`; a test fails when the two differ.

Credentials: the admin API key as \`x-api-key\` (or \`Authorization: Bearer ik_…\`), the anon key
as \`apikey\`, a user's access token as \`Authorization: Bearer <token>\`. Every error answer has
the body \`{statusCode, error, message, nextActions}\`; the codes are in [errors.md](errors.md).
What each area does, and why, is in its own page (the README's table "What is in the box").

${toc.join('\n')}

${sections.join('\n')}`;
}
