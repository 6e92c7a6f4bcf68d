import { build } from './esbuild.js';
import { AppError } from '../errors/index.js';
import { checkEntry, toModule } from './forms.js';

/** Largest accepted source, in bytes of UTF-8. */
export const MAX_CODE_BYTES = 1024 * 1024;

/**
 * Checks and compiles function source (JavaScript or TypeScript, in one of the forms of
 * forms.ts) to the ES module the runtime loads. A syntax error is INVALID_CODE_SYNTAX with its
 * line and column; code with no entry (default or `handler` export, `module.exports`,
 * `Deno.serve`) is INVALID_FUNCTION_CODE. Imports are left as written (the sandbox refuses
 * remote and file imports; `node:` built-ins work).
 */
export async function compileFunction(source: string): Promise<string> {
  if (Buffer.byteLength(source, 'utf8') > MAX_CODE_BYTES) {
    throw new AppError('FUNCTION_CODE_TOO_LARGE', { message: `Function code may be at most ${MAX_CODE_BYTES} bytes.` });
  }
  let result;
  try {
    result = await build({
      stdin: { contents: await toModule(source), loader: 'ts', sourcefile: 'function.ts' },
      write: false,
      bundle: false,
      format: 'esm',
      target: 'esnext',
      metafile: true,
      logLevel: 'silent',
      legalComments: 'none',
      // Stack traces in the function's logs then point at the lines the user wrote.
      sourcemap: 'inline',
      sourcesContent: false,
    });
  } catch (err) {
    const first = (err as { errors?: Array<{ text: string; location: { line: number; column: number } | null }> })
      .errors?.[0];
    if (!first) throw err;
    const at = first.location ? ` at line ${first.location.line}, column ${first.location.column + 1}` : '';
    throw new AppError('INVALID_CODE_SYNTAX', { message: `Syntax error${at}: ${first.text}.`, cause: err });
  }
  const exports = Object.values(result.metafile.outputs)[0]?.exports ?? [];
  checkEntry(exports, source);
  return result.outputFiles[0]!.text;
}
