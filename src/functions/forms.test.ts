import { describe, expect, it } from 'vitest';
import { SDK_SPECIFIER, toModule } from './forms.js';

describe('toModule', () => {
  it('leaves a module as written', async () => {
    const code = 'export default async function (req: Request) { return new Response("x"); }';
    expect(await toModule(code)).toBe(code);
  });

  it("blanks a types-only import in place (Supabase's edge-runtime.d.ts), keeping every position", async () => {
    const code = 'import "jsr:@supabase/functions-js/edge-runtime.d.ts";\nDeno.serve(() => new Response("x"));';
    const out = await toModule(code);
    expect(out).not.toContain('edge-runtime');
    expect(out.length).toBe(code.length);
    expect(out.indexOf('Deno.serve')).toBe(code.indexOf('Deno.serve'));
    // A module that imports a .d.ts with names is not touched (esbuild drops type-only imports).
    const named = "import type { X } from './x.d.ts';\nexport default () => new Response('x');";
    expect(await toModule(named)).toBe(named);
  });

  it('wraps the script form in module and exports, on the first line, and exports module.exports', async () => {
    const code = 'module.exports = async function (request) {\n  return new Response("x");\n};';
    const out = await toModule(code);
    expect(out.split('\n')[1]).toBe('  return new Response("x");');
    expect(out).toMatch(/export default/);
    expect(out).not.toContain(SDK_SPECIFIER);
  });

  it('imports createClient for code that uses it without importing it, and only then', async () => {
    const script = 'module.exports = async () => { const c = createClient({}); return new Response("x"); };';
    expect((await toModule(script)).split('\n')[0]).toContain(`from '${SDK_SPECIFIER}'`);
    const esm = 'export default async () => { createClient({}); return new Response("x"); };';
    expect((await toModule(esm)).split('\n')[0]).toContain(`from '${SDK_SPECIFIER}'`);
    const own = "import { createClient } from 'npm:@supabase/supabase-js';\nexport default () => createClient();";
    expect(await toModule(own)).toBe(own);
  });

  it('leaves code that does not parse as written, so that the compile reports its own positions', async () => {
    const code = 'module.exports = async function (request) {\n  return new Response(\n};';
    expect(await toModule(code)).toBe(code);
  });
});
