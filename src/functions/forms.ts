import { build } from './esbuild.js';
import { AppError } from '../errors/index.js';

// The forms real apps write a function in (docs/functions.md, "Forms a function may take"),
// turned into the one the worker loads: an ES module whose default export, `handler` export or
// `Deno.serve(...)` call is the entry (deno-host.js takes `default ?? handler ?? served`).
//
//   export default async function (req) {...}        Plinth's and InsForge's module form
//   export async function handler(req) {...}         InsForge: `default ?? handler`
//   module.exports = async function (request) {...}  InsForge's script form (no import/export)
//   Deno.serve((req) => ...)                         Supabase's form
//
// `createClient` (from the InsForge SDK) is in scope without an import when the code uses it
// and does not import it itself; `encodeBase64`/`decodeBase64` are globals of the worker.

/** The SDK a function gets `createClient` from when it does not import it (as InsForge's runtime). */
export const SDK_SPECIFIER = 'npm:@insforge/sdk';

/** The forms, named in the message of a module with none of them. */
const FORMS =
  'export a default function (export default async function (req: Request) { ... }), export a function ' +
  'named handler (export async function handler(req) { ... }), assign module.exports ' +
  '(module.exports = async function (req) { ... }) or call Deno.serve((req) => ...)';

// A side-effect import of a declaration file (Supabase's
// `import "jsr:@supabase/functions-js/edge-runtime.d.ts"`) has types only: it is dropped rather
// than fetched, blanked in place so that lines and columns stay where the user wrote them.
const TYPES_ONLY_IMPORT = /^[ \t]*import[ \t]+(['"])[^'"\n]+\.d\.ts\1[ \t]*;?/gm;
const USES_CREATE_CLIENT = /\bcreateClient\b/;
const IMPORTS_CREATE_CLIENT = /\bimport\s*(?:type\s+)?\{[^}]*\bcreateClient\b[^}]*\}\s*from\b/;
const CALLS_DENO_SERVE = /\bDeno\s*\.\s*serve\s*\(/;

type Format = 'esm' | 'cjs' | 'none';

/**
 * The source as a standard ES module (see the forms above), still TypeScript. A syntax error
 * leaves it as written, so that the compile reports it at the user's own line and column.
 */
export async function toModule(source: string): Promise<string> {
  const code = source.replace(TYPES_ONLY_IMPORT, (m) => ' '.repeat(m.length));
  const format = await formatOf(code);
  if (format === null) return code;
  const sdk = USES_CREATE_CLIENT.test(code) && !IMPORTS_CREATE_CLIENT.test(code);
  if (format === 'cjs') return script(code, sdk);
  if (!sdk) return code;
  // On the first line, so that the user's lines keep their numbers in errors and stack traces.
  return `import { createClient as __plinthCreateClient } from '${SDK_SPECIFIER}'; globalThis.createClient ??= __plinthCreateClient; ${code}`;
}

/**
 * The script form as a module: `module` and `exports` as CommonJS has them, the user's code in
 * a block of its own (its declarations may shadow `createClient`), and the default export
 * `module.exports` (or its `default` or `handler` when that is an object: the worker names what
 * it got when none is a function).
 */
function script(code: string, sdk: boolean): string {
  const client = sdk
    ? `import { createClient as __plinthCreateClient } from '${SDK_SPECIFIER}'; const createClient = __plinthCreateClient; `
    : '';
  return (
    `${client}const module = { exports: {} }; let exports = module.exports; {${code}\n}\n` +
    `const __plinthEntry = module.exports;\nexport const __plinthScript = true;\n` +
    `export default typeof __plinthEntry === 'function' ? __plinthEntry : (__plinthEntry?.default ?? __plinthEntry?.handler ?? __plinthEntry);\n`
  );
}

/** Whether the code is an ES module, a CommonJS script, or neither (esbuild's own detection); null: it does not parse. */
async function formatOf(code: string): Promise<Format | null> {
  try {
    const r = await build({
      stdin: { contents: code, loader: 'ts', sourcefile: 'function.ts' },
      write: false,
      bundle: false,
      format: 'esm',
      metafile: true,
      logLevel: 'silent',
    });
    return Object.values(r.metafile.inputs)[0]?.format ?? 'none';
  } catch {
    return null;
  }
}

/**
 * Refuses a compiled module with no entry: no default export, no `handler` export and no
 * `Deno.serve(...)` call in the source (INVALID_FUNCTION_CODE naming every form).
 */
export function checkEntry(exports: readonly string[], source: string): void {
  if (exports.includes('default') || exports.includes('handler') || CALLS_DENO_SERVE.test(source)) return;
  throw new AppError('INVALID_FUNCTION_CODE', { message: `The code has no entry: ${FORMS}.` });
}
