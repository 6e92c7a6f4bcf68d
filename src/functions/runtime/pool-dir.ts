import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { alive } from '../../lib/process.js';

const DIR_PREFIX = 'plinth-fn-';

/**
 * Makes a pool's temp dir under `root`: Deno's cache in `deno/`, one dir per process beside it,
 * and `owner.pid` so the next pool on this machine can tell when the server that made it died.
 * The dirs of pools whose server died without cleaning up (e.g. kill -9) are removed first.
 */
export function makePoolDir(root: string): string {
  removeStaleDirs(root);
  const dir = mkdtempSync(path.join(root, DIR_PREFIX));
  mkdirSync(path.join(dir, 'deno'));
  writeFileSync(path.join(dir, 'owner.pid'), String(process.pid));
  return dir;
}

function removeStaleDirs(root: string): void {
  try {
    for (const name of readdirSync(root)) {
      if (!name.startsWith(DIR_PREFIX)) continue;
      const dir = path.join(root, name);
      let owner: number;
      try {
        owner = Number(readFileSync(path.join(dir, 'owner.pid'), 'utf8'));
      } catch {
        continue; // not ours to judge
      }
      if (!Number.isInteger(owner) || owner <= 0 || alive(owner)) continue;
      rmSync(dir, { recursive: true, force: true });
    }
  } catch {
    // best effort
  }
}
