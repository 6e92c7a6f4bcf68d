// The Plinth command line: `npm run plinth -- <command>`. Works on the configured database
// (DATA_DIR or DATABASE_URL). With the embedded database, stop the server first.
import { ConfigError, loadConfig, readEnv } from './config/index.js';
// Only what every command needs is imported here; each command loads its own modules, so a
// command starts without loading the server.
import { openDb } from './db/configured.js';
import { migrate } from './db/migrate.js';
import { VERSION } from './version.js';
import type { Config } from './config/index.js';
import { MIGRATIONS_USAGE, migrationsCommand } from './database/migrations/cli.js';
import { writeFileSync } from 'node:fs';
import { rotateAdminKey, rotateAnonKey, rotateJwtSecret, storedAnonKey } from './auth/credentials.js';

const USAGE = `Usage: npm run plinth -- <command>

Commands:
  keys show              print the anon key (the admin key is stored only as a hash)
  keys rotate-admin      make a new admin API key and print it once; the old one stops working
  keys rotate-anon       make a new anon key and print it
  keys rotate-jwt        make a new JWT secret: every access token issued so far stops working
  backup <file>          write the embedded database and local storage of DATA_DIR to <file> (.tar.gz)
  restore <file> [--force]
                         restore such a file into DATA_DIR (--force moves existing data aside)
${MIGRATIONS_USAGE}
  mcp --url <url> --key <admin key> [--readonly]
                         an MCP server on stdio relaying to <url>/api/mcp (for stdio-only clients)
  gen types [--url <url> --key <admin key>] [--out <file>]
                         the TypeScript Database type of schema public (Supabase's format), from a
                         running server, or else from the configured database

Running servers read the keys at start: restart them after a rotation. With the embedded
database (no DATABASE_URL) stop the server before running a keys, backup or restore command;
the db migrations commands talk to a running server instead.`;

const SERVER_POSTGRES_HINT =
  'DATABASE_URL is set: the database is a Postgres server, not the embedded one. Back it up with ' +
  '"pg_dump -Fc -f plinth.dump $DATABASE_URL" and restore with "pg_restore --clean -d $DATABASE_URL plinth.dump" (README, Backups).';

/** `backup <file>` / `restore <file> [--force]`: the embedded database of DATA_DIR, server stopped. */
async function backupCommand(config: Readonly<Config>, argv: string[]): Promise<number> {
  const [cmd, file, ...rest] = argv;
  if (!file || rest.some((a) => a !== '--force') || (cmd === 'backup' && rest.length)) {
    process.stdout.write(`${USAGE}\n`);
    return 2;
  }
  if (config.databaseUrl) throw new Error(SERVER_POSTGRES_HINT);
  const s3 = config.storage.s3
    ? `\nStorage is S3 (bucket ${config.storage.s3.bucket}): back it up with the provider's versioning or "aws s3 sync".`
    : '';
  if (cmd === 'backup') {
    const { writeOfflineBackup } = await import('./db/embedded/backup.js');
    await writeOfflineBackup({
      dataDir: config.dataDir,
      file,
      plinthVersion: VERSION,
      includeStorage: !config.storage.s3,
    });
    process.stdout.write(
      `Backup written to ${file} (database${config.storage.s3 ? '' : ' and local storage'} of ${config.dataDir}).${s3}\n`,
    );
    return 0;
  }
  const { restoreBackup } = await import('./db/embedded/restore.js');
  const { manifest, movedAside } = await restoreBackup({
    dataDir: config.dataDir,
    file,
    force: rest.includes('--force'),
  });
  process.stdout.write(
    `Restored the backup of ${manifest.createdAt} (Plinth ${manifest.plinthVersion}, Postgres ${manifest.postgresMajor}) into ${config.dataDir}.\n`,
  );
  for (const dir of movedAside) process.stdout.write(`The data that was there is kept at ${dir}.\n`);
  if (manifest.kind === 'online')
    process.stdout.write('It was taken from a running server: the next start replays its WAL first (recovery).\n');
  process.stdout.write(
    `Start the server to use it.${manifest.storage === 's3' ? '\nThe archive holds no storage objects (they live in S3).' : ''}\n`,
  );
  return 0;
}

/**
 * The embedded database's events as plain lines on stderr (a command speaks to a person, not
 * to a log shipper): warnings unless LOG_LEVEL is error or quieter, the rest at info or lower.
 */
function plainEvents(level: string) {
  const warnings = !['error', 'fatal', 'silent'].includes(level);
  const info = warnings && level !== 'warn';
  return (event: string, detail: Record<string, unknown>) => {
    if (!(/unexpectedly|orphaned|could not/.test(event) ? warnings : info)) return;
    const said = Object.entries(detail).map(([k, v]) => `${k} ${typeof v === 'string' ? v : JSON.stringify(v)}`);
    process.stderr.write(`database: ${event}${said.length ? ` (${said.join(', ')})` : ''}\n`);
  };
}

/** `--name value` options of a command line. */
function options(argv: string[]): Record<string, string | true> {
  const o: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([a-z-]+)$/.exec(argv[i]!);
    if (!m) continue;
    const next = argv[i + 1];
    o[m[1]!] = next === undefined || next.startsWith('--') ? true : (i++, next);
  }
  return o;
}

async function mcpCommand(argv: string[]): Promise<number> {
  const o = options(argv);
  const url = typeof o.url === 'string' ? o.url : process.env.PLINTH_URL;
  const key = typeof o.key === 'string' ? o.key : process.env.PLINTH_ADMIN_KEY;
  if (!url || !key) {
    process.stderr.write(
      'Usage: npm run plinth -- mcp --url http://localhost:7130 --key <admin key> [--readonly]\n(or PLINTH_URL and PLINTH_ADMIN_KEY)\n',
    );
    return 2;
  }
  const { runBridge } = await import('./mcp/bridge.js');
  await runBridge({ url, key, readOnly: o.readonly === true });
  return 0;
}

async function genTypesCommand(argv: string[]): Promise<number> {
  const o = options(argv);
  let types: string;
  if (typeof o.url === 'string') {
    if (typeof o.key !== 'string') throw new Error('--url needs --key <admin key> as well.');
    const r = await fetch(new URL('/api/database/types/typescript', o.url), {
      headers: { authorization: `Bearer ${o.key}` },
    });
    const body = (await r.json()) as { types?: string; message?: string; nextActions?: string };
    if (!r.ok || typeof body.types !== 'string')
      throw new Error(`${r.status}: ${body.message ?? 'no types'} ${body.nextActions ?? ''}`);
    types = body.types;
  } else {
    const { TypeGenerator } = await import('./database/typegen.js');
    const db = await openDb(loadConfig(readEnv()));
    try {
      types = await new TypeGenerator(db).typescript();
    } finally {
      await db.close();
    }
  }
  if (typeof o.out === 'string') {
    writeFileSync(o.out, types);
    process.stderr.write(`Types written to ${o.out}.\n`);
  } else process.stdout.write(types);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [group, cmd] = argv;
  if (group === 'backup' || group === 'restore') return backupCommand(loadConfig(readEnv()), argv);
  if (group === 'db')
    return migrationsCommand(argv.slice(1), {
      env: readEnv(),
      cwd: process.cwd(),
      out: (line) => process.stdout.write(`${line}\n`),
    });
  if (group === 'mcp') return mcpCommand(argv.slice(1));
  if (group === 'gen' && cmd === 'types') return genTypesCommand(argv.slice(2));
  if (group !== 'keys' || !cmd || !['show', 'rotate-admin', 'rotate-anon', 'rotate-jwt'].includes(cmd)) {
    process.stdout.write(`${USAGE}\n`);
    return group === undefined || group === 'help' || group === '--help' ? 0 : 2;
  }
  const config = loadConfig(readEnv());
  const db = await openDb(config, plainEvents(config.logLevel));
  try {
    await migrate(db);
    switch (cmd) {
      case 'show': {
        const key = config.credentials.anonKey ?? (await storedAnonKey(db));
        process.stdout.write(
          key ? `anon key: ${key}\n` : 'No anon key yet: start the server once to generate the keys.\n',
        );
        if (config.credentials.anonKey) process.stdout.write('(from the ANON_KEY environment variable)\n');
        break;
      }
      case 'rotate-admin':
        process.stdout.write(`New admin API key (shown only now; store it safely):\n${await rotateAdminKey(db)}\n`);
        if (config.credentials.adminApiKey)
          process.stdout.write('Note: ADMIN_API_KEY is set in the environment and still overrides the stored key.\n');
        break;
      case 'rotate-anon':
        process.stdout.write(`New anon key:\n${await rotateAnonKey(db)}\n`);
        if (config.credentials.anonKey)
          process.stdout.write('Note: ANON_KEY is set in the environment and still overrides the stored key.\n');
        break;
      case 'rotate-jwt':
        await rotateJwtSecret(db);
        process.stdout.write('New JWT secret stored. Restart the servers; every user must sign in again.\n');
        if (config.credentials.jwtSecret)
          process.stdout.write('Note: JWT_SECRET is set in the environment and still overrides the stored secret.\n');
        break;
    }
    return 0;
  } finally {
    await db.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(
      `${err instanceof ConfigError ? err.message : `plinth: ${err instanceof Error ? err.message : String(err)}`}\n`,
    );
    process.exit(1);
  },
);
