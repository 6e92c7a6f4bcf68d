// The shape of src/ that docs/architecture.md describes, checked so that it stays true:
// the floors only import downwards, Fastify stays in src/http, no module imports itself back
// through others (in src/ and the dashboard), and no file or function grows past the size
// where it starts mixing concerns.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');
const DASHBOARD = path.resolve(import.meta.dirname, '../../dashboard/src');
const MAX_FILE_LINES = 350;
const MAX_FUNCTION_LINES = 80;

function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.(tsx?|js)$/.test(name) && !/\.test\.tsx?$/.test(name) ? [full] : [];
  });
}

const rel = (file: string) => path.relative(SRC, file);
/** The top folder of a file under src ('' for src/app.ts and the other root files). */
const floorOf = (file: string) => (rel(file).includes(path.sep) ? rel(file).split(path.sep)[0]! : '');

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [
    ...text.matchAll(/^\s*(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]/gm),
    ...text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]!);
}

/** Folders under src each file resolves its relative imports into. */
function importedFloors(file: string): string[] {
  return imports(file)
    .filter((s) => s.startsWith('.'))
    .map((s) => floorOf(path.resolve(path.dirname(file), s)));
}

/** The ground floor: imports nothing above it. */
const GROUND = ['db', 'lib', 'errors', 'config'];
/** The job library the domains enqueue into: only the ground floor below it. */
const JOBS = 'jobs';
/** The domains: framework-free, never the HTTP layer or the composition root. */
const DOMAIN = [
  'auth',
  'database',
  'storage',
  'functions',
  'ai',
  'realtime',
  'logs',
  'metrics',
  'advisor',
  'metadata',
  'schedules',
  'webhooks',
  'email',
  'admin',
  'mcp',
];

/** The file a relative import names (`./x.js` is `./x.ts` in the source; the dashboard omits extensions). */
function resolveImport(from: string, spec: string, known: Set<string>): string | null {
  const base = path.resolve(path.dirname(from), spec);
  const stem = base.replace(/\.js$/, '');
  const candidates = [base, `${stem}.ts`, `${stem}.tsx`, path.join(base, 'index.ts'), path.join(base, 'index.tsx')];
  return candidates.find((c) => known.has(c)) ?? null;
}

/** The strongly connected components of more than one file in the relative-import graph of `root` (Tarjan). */
function importCircles(root: string): string[][] {
  const files = sourceFiles(root);
  const known = new Set(files);
  const edges = new Map(
    files.map((f) => [
      f,
      imports(f)
        .filter((s) => s.startsWith('.'))
        .map((s) => resolveImport(f, s, known))
        .filter((x): x is string => x !== null),
    ]),
  );
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(path.relative(root, w));
    } while (w !== v);
    if (component.length > 1) circles.push(component.sort());
  };
  for (const f of files) if (!index.has(f)) visit(f);
  return circles;
}

describe('structure of src/', () => {
  const files = sourceFiles();

  it('finds the source tree', () => {
    expect(files.length).toBeGreaterThan(50);
  });

  it('every folder of src/ is on a floor, so the rules below cover every area', () => {
    const folders = readdirSync(SRC).filter((name) => statSync(path.join(SRC, name)).isDirectory());
    expect(folders.filter((f) => ![...GROUND, JOBS, ...DOMAIN, 'http'].includes(f))).toEqual([]);
  });

  it('src/db and src/lib are the ground floor: they import nothing above them', () => {
    const bad = files
      .filter((f) => GROUND.includes(floorOf(f)))
      .flatMap((f) =>
        importedFloors(f)
          .filter((floor) => [JOBS, ...DOMAIN, 'http', ''].includes(floor))
          .map((floor) => `${rel(f)} → ${floor}`),
      );
    expect(bad).toEqual([]);
  });

  it('src/jobs imports only the ground floor', () => {
    const bad = files
      .filter((f) => floorOf(f) === JOBS)
      .flatMap((f) =>
        importedFloors(f)
          .filter((floor) => floor !== JOBS && !GROUND.includes(floor))
          .map((floor) => `${rel(f)} → ${floor || 'src root'}`),
      );
    expect(bad).toEqual([]);
  });

  it('domain modules never import the HTTP layer or the composition root', () => {
    const bad = files
      .filter((f) => DOMAIN.includes(floorOf(f)))
      .flatMap((f) =>
        importedFloors(f)
          .filter((floor) => floor === 'http' || floor === '')
          .map((floor) => `${rel(f)} → ${floor || 'src root'}`),
      );
    expect(bad).toEqual([]);
  });

  it('no import circles in src/ or the dashboard (type-only imports count)', () => {
    const circles = [...importCircles(SRC), ...importCircles(DASHBOARD)].map((c) => c.join(' ↔ '));
    expect(circles).toEqual([]);
  });

  it('only src/http and app.ts import Fastify', () => {
    const bad = files
      .filter((f) => floorOf(f) !== 'http' && rel(f) !== 'app.ts')
      .filter((f) => imports(f).some((s) => s === 'fastify' || s.startsWith('@fastify/')))
      .map(rel);
    expect(bad).toEqual([]);
  });

  it(`no source file is over ${MAX_FILE_LINES} lines`, () => {
    const long = files
      .map((f) => ({ f: rel(f), n: readFileSync(f, 'utf8').split('\n').length }))
      .filter((x) => x.n > MAX_FILE_LINES);
    expect(long).toEqual([]);
  });

  it(`no function is over ${MAX_FUNCTION_LINES} lines, route tables aside`, () => {
    const long: string[] = [];
    for (const file of files.filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(file, 'utf8');
      const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node) => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body && !isRouteTable(node)) {
          const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
          const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
          if (end - start + 1 > MAX_FUNCTION_LINES) long.push(`${rel(file)}:${start + 1} (${end - start + 1} lines)`);
        }
        ts.forEachChild(node, visit);
      };
      visit(sf);
    }
    expect(long).toEqual([]);
  });
});

/** A route plugin (`export const xRoutes: RoutePlugin = async (app, ...) => { app.get(...); ... }`): a table of routes. */
function isRouteTable(node: ts.Node): boolean {
  const parent = node.parent;
  return (
    ts.isArrowFunction(node) &&
    ts.isVariableDeclaration(parent) &&
    parent.type !== undefined &&
    /^(RoutePlugin|FastifyPluginAsync)\b/.test(parent.type.getText())
  );
}

const TESTS = path.resolve(import.meta.dirname, '..');
/**
 * Test files that may call the global fetch, each with the reason; every other test sends its
 * requests through call() or send() of test/helpers/http.ts.
 */
const RAW_FETCH: Record<string, string> = {
  'helpers/app.ts': 'the fetch of a TestApp, which call() sends through',
  'helpers/configured-app.ts': 'the fetch of a configured app, which call() sends through',
  'helpers/http.ts': 'at(url), the target of a server that is not a TestApp',
  'auth/browser.ts': "a browser's requests: any host, redirects by hand, the Response handed back",
  'storage/s3-presigned.test.ts': 'the presigned form and URL go to S3 itself, not to Plinth',
};

/** Every TypeScript file under test/, as a path relative to it. */
function testFiles(dir = TESTS): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return testFiles(file);
    return /\.tsx?$/.test(name) ? [path.relative(TESTS, file).split(path.sep).join('/')] : [];
  });
}

/** Whether a file calls the global fetch (calls inside strings, such as function code, do not count). */
function callsFetch(file: string): boolean {
  const sf = ts.createSourceFile(file, readFileSync(path.join(TESTS, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const calls = (node: ts.Node): boolean =>
    (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'fetch') ||
    ts.forEachChild(node, calls) === true;
  return calls(sf);
}

describe('structure of test/', () => {
  const files = testFiles();

  it('tests send their requests through call() (test/helpers/http.ts), raw fetch only where the list says why', () => {
    const callers = files.filter(callsFetch);
    expect(callers.filter((f) => !(f in RAW_FETCH))).toEqual([]);
    // A file that no longer needs its raw fetch leaves the list (this also shows the check sees them).
    expect(Object.keys(RAW_FETCH).filter((f) => !callers.includes(f))).toEqual([]);
  });

  it('one freePort, in test/helpers/port.ts', () => {
    const defining = files.filter((f) =>
      /\b(function\s+freePort|freePort\s*=)/.test(readFileSync(path.join(TESTS, f), 'utf8')),
    );
    expect(defining).toEqual(['helpers/port.ts']);
  });
});
