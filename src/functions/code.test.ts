import { describe, expect, it } from 'vitest';
import { AppError } from '../errors/index.js';
import { compileFunction, MAX_CODE_BYTES } from './code.js';

async function failure(source: string): Promise<AppError> {
  const err = await compileFunction(source).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('compileFunction', () => {
  it('compiles TypeScript to JavaScript with the default export kept', async () => {
    const js = await compileFunction(
      'export default async function (req: Request): Promise<Response> { const n: number = 1; return new Response(String(n)); }',
    );
    expect(js).not.toContain(': number');
    expect(js).toMatch(/as default/);
  });

  it('reports a syntax error with line and column', async () => {
    const err = await failure('export default async function (req) {\n  return new Response(\n}');
    expect(err.code).toBe('INVALID_CODE_SYNTAX');
    expect(err.message).toMatch(/line 3, column 1/);
  });

  it('refuses a module without an entry, naming every form', async () => {
    for (const code of ['export const other = () => new Response("x")', 'console.log(1)', 'const x = 1;']) {
      const err = await failure(code);
      expect(err.code).toBe('INVALID_FUNCTION_CODE');
      for (const form of ['export default', 'handler', 'module.exports', 'Deno.serve'])
        expect(err.message).toContain(form);
    }
  });

  it.each([
    ['a handler export', 'export async function handler(req: Request) { return new Response("x"); }'],
    ['the script form', 'module.exports = async function (request: Request) { return new Response("x"); };'],
    ['Deno.serve', 'Deno.serve((req: Request) => new Response("x"));'],
  ])('accepts %s', async (_, code) => {
    await expect(compileFunction(code)).resolves.toMatch(/./);
  });

  it('refuses code over 1 MiB', async () => {
    const big = `export default () => new Response("x");\n//${'x'.repeat(MAX_CODE_BYTES)}`;
    expect((await failure(big)).code).toBe('FUNCTION_CODE_TOO_LARGE');
  });
});
