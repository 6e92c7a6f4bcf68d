// `npm run build`: bundles the server's entry points (src/main.ts, src/cli.ts and the image
// render process) into dist/ with esbuild, copies the files that are not code (SQL migrations,
// the Deno host scripts) beside them at their paths under src/, and bundles docs/*.md into
// dist/mcp/agent-docs.json (the docs for agents the server serves).
// Only Plinth's own code is bundled: every npm package stays an import of node_modules. The
// bundles and their shared chunks all sit at dist/'s top level (src/lib/code-dir.ts relies on
// it); what the code imports with `import()` on first use (S3 storage, MCP sessions, the CLI's
// commands) is split into chunks of its own, loaded only then. A start reads a few dozen files
// instead of ≈ 340 modules (docs/benchmarks.md, branch bundle38). Types are checked by
// `npm run typecheck`, not here.
// `node scripts/build.mjs <dir>` builds into another folder of the project root instead (tests).
// The dashboard (`npm run build:dashboard`, Vite) lives in <dir>/dashboard and is kept here.
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');
const src = path.join(root, 'src');
const dist = path.join(root, process.argv[2] ?? 'dist');
if (path.dirname(dist) !== root)
  throw new Error(
    'The build goes into a folder of the project root (it reads ../package.json and node_modules from there).',
  );
/** Each bundle's name in dist/ and its source: the server, the CLI, the image render process, the
 * standalone function runtime (docs/functions.md). */
const ENTRIES = {
  main: 'main.ts',
  cli: 'cli.ts',
  'image-render': 'storage/image-render.ts',
  'function-runtime': 'functions/runtime/main.ts',
};
/** Documented commands that name a file below dist/: each imports its bundle. */
const ALIASES = { 'functions/runtime/main.js': 'function-runtime.js' };

for (const name of (existsSync(dist) ? readdirSync(dist) : []).filter((n) => n !== 'dashboard')) {
  rmSync(path.join(dist, name), { recursive: true, force: true });
}
/**
 * npm packages bundled in anyway: ESM packages of hundreds of small files that a start loads
 * (typebox alone is ≈ 680 files, and the Fastify provider that re-exports it must come along so
 * there is one copy; jose ≈ 50). They are pure JavaScript with no files of their own to find.
 */
const INLINE = /^(typebox|@fastify\/type-provider-typebox|jose)(\/|$)/;
/** Every other bare import (npm packages, node: built-ins) stays an import, resolved at run time. */
const packagesExternal = {
  name: 'packages-external',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      INLINE.test(args.path) ? undefined : { path: args.path, external: true },
    );
  },
};
/** The same settings for the server's bundles and the build's own use of the docs module. */
const bundle = (entryPoints, outdir, more = {}) =>
  build({
    entryPoints,
    outdir,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    plugins: [packagesExternal],
    logLevel: 'warning',
    ...more,
  });
await bundle(Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, path.join(src, file)])), dist, {
  splitting: true,
  sourcemap: true,
  chunkNames: 'chunk-[hash]',
});

/** Every file under `dir` that is not TypeScript. */
function assets(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return assets(full);
    return name.endsWith('.ts') ? [] : [full];
  });
}
for (const file of assets(src)) cpSync(file, path.join(dist, path.relative(src, file)));
for (const [alias, target] of Object.entries(ALIASES)) {
  const file = path.join(dist, alias);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `import '${path.relative(path.dirname(file), path.join(dist, target))}';\n`);
}

// The docs for agents, made from docs/ by the same code the server uses to read them.
const tmp = path.join(dist, '.build-docs');
await bundle({ 'docs-bundle': path.join(src, 'mcp', 'docs-bundle.ts') }, tmp);
const { bundleDocs } = await import(pathToFileURL(path.join(tmp, 'docs-bundle.js')).href);
rmSync(tmp, { recursive: true, force: true });
mkdirSync(path.join(dist, 'mcp'), { recursive: true });
writeFileSync(path.join(dist, 'mcp', 'agent-docs.json'), JSON.stringify(bundleDocs(path.join(root, 'docs'))));
