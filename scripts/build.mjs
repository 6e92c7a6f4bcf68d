// `npm run build`: compiles src/ to dist/ with tsc and copies the files tsc does not emit
// (SQL migrations, the Deno host script) beside them, so dist/ runs on plain Node, and bundles
// docs/*.md into dist/mcp/agent-docs.json (the docs for agents the server serves).
// `node scripts/build.mjs <dir>` builds into another folder of the project root instead (tests).
// The dashboard (`npm run build:dashboard`, Vite) lives in <dir>/dashboard and is kept here.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const src = path.join(root, 'src');
const dist = path.join(root, process.argv[2] ?? 'dist');
if (path.dirname(dist) !== root)
  throw new Error(
    'The build goes into a folder of the project root (it reads ../package.json and node_modules from there).',
  );
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

for (const name of (existsSync(dist) ? readdirSync(dist) : []).filter((n) => n !== 'dashboard')) {
  rmSync(path.join(dist, name), { recursive: true, force: true });
}
execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--outDir', dist], {
  stdio: 'inherit',
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

// The docs for agents, made from docs/ by the same code the server uses to read them.
const { bundleDocs } = await import(pathToFileURL(path.join(dist, 'mcp', 'docs-bundle.js')).href);
writeFileSync(path.join(dist, 'mcp', 'agent-docs.json'), JSON.stringify(bundleDocs(path.join(root, 'docs'))));
