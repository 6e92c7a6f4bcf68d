import { describe, expect, it } from 'vitest';
import { resolvedOf } from './build.js';
import { checkImports, importsOf, parseNpm } from './imports.js';
import { npmrcText, parseBundleError } from './runtime/bundler.js';

describe('imports of a function', () => {
  it('takes npm: specifiers apart', () => {
    expect(parseNpm('npm:zod')).toEqual({ name: 'zod', range: '*', subpath: '' });
    expect(parseNpm('npm:@insforge/sdk@1.5.2/ssr')).toEqual({ name: '@insforge/sdk', range: '1.5.2', subpath: '/ssr' });
    expect(parseNpm('npm:@scope/name/sub/path')).toEqual({ name: '@scope/name', range: '*', subpath: '/sub/path' });
    expect(parseNpm('npm:')).toBeNull();
  });

  it('lists static and dynamic imports, and refuses what may not be imported', async () => {
    const refs = await importsOf(
      "import a from 'npm:zod@3'; import 'node:fs'; const b = () => import('https://deno.land/x.ts'); export default a;",
    );
    expect(refs).toEqual([
      { specifier: 'npm:zod@3', kind: 'npm', dynamic: false },
      { specifier: 'node:fs', kind: 'node', dynamic: false },
      { specifier: 'https://deno.land/x.ts', kind: 'remote', dynamic: true },
    ]);
    expect(() => checkImports(refs, [])).not.toThrow();
    const no = (specifier: string, hosts: string[] = []) =>
      expect(() =>
        checkImports(
          [
            {
              specifier,
              kind: specifier.startsWith('https:') ? 'remote' : specifier.startsWith('jsr:') ? 'jsr' : 'other',
              dynamic: false,
            },
          ],
          hosts,
        ),
      ).toThrow(/FUNCTION_IMPORT_HOSTS|one file/);
    no('https://evil.example/x.js', ['esm.sh']);
    no('jsr:@std/assert');
    no('./local.js');
    no('zod');
    expect(() =>
      checkImports([{ specifier: 'https://esm.sh:8443/x', kind: 'remote', dynamic: false }], ['esm.sh:8443']),
    ).not.toThrow();
  });

  it('reads what a specifier resolved to from the lockfile', () => {
    const lock = {
      specifiers: { 'npm:@insforge/sdk@*': '1.5.2', 'npm:zod@3': '3.25.76', 'jsr:@std/assert@1': '1.0.13' },
    };
    expect(resolvedOf({ specifier: 'npm:@insforge/sdk', kind: 'npm', dynamic: false }, lock)).toBe(
      'npm:@insforge/sdk@1.5.2',
    );
    expect(resolvedOf({ specifier: 'npm:zod@3/v4', kind: 'npm', dynamic: false }, lock)).toBe('npm:zod@3.25.76/v4');
    expect(resolvedOf({ specifier: 'jsr:@std/assert@1', kind: 'jsr', dynamic: false }, lock)).toBe(
      'jsr:@std/assert@1.0.13',
    );
    expect(resolvedOf({ specifier: 'https://x.dev/m.js', kind: 'remote', dynamic: false }, lock)).toBe(
      'https://x.dev/m.js',
    );
  });

  it("parses deno's errors and writes the .npmrc", () => {
    const f = parseBundleError(
      "\u001b[31merror\u001b[0m: Import 'http://127.0.0.1:9/ok.js' failed.\n    0: error sending request\n    1: client error\n",
    );
    expect(f.message).toBe("Import 'http://127.0.0.1:9/ok.js' failed.: error sending request: client error");
    const s = parseBundleError(
      'error: SyntaxError: Unterminated template\n  |\n1 | x\n    at http://h/bad.js:1:48\nerror: bundling failed\n',
    );
    expect([s.message, s.file, s.line]).toEqual(['SyntaxError: Unterminated template', 'http://h/bad.js', 1]);
    expect(npmrcText({ npmRegistry: 'https://npm.acme.dev/r', npmToken: 't0k', npmrc: '@a:registry=https://a/' })).toBe(
      '@a:registry=https://a/\nregistry=https://npm.acme.dev/r/\n//npm.acme.dev/r/:_authToken=t0k\n',
    );
  });
});
