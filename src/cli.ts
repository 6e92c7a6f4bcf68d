// The Plinth command line: `npm run plinth -- <command>`. Works on the configured database
// (DATA_DIR or DATABASE_URL). With the embedded database, stop the server first.
import { ConfigError, loadConfig, readEnv } from './config/index.js';
import { openDb } from './deps.js';
import { migrate } from './db/migrate.js';
import { rotateAdminKey, rotateAnonKey, rotateJwtSecret, storedAnonKey } from './auth/credentials.js';

const USAGE = `Usage: npm run plinth -- <command>

Commands:
  keys show              print the anon key (the admin key is stored only as a hash)
  keys rotate-admin      make a new admin API key and print it once; the old one stops working
  keys rotate-anon       make a new anon key and print it
  keys rotate-jwt        make a new JWT secret: every access token issued so far stops working

Running servers read the keys at start: restart them after a rotation. With the embedded
database (no DATABASE_URL) stop the server before running a command.`;

async function main(argv: string[]): Promise<number> {
  const [group, cmd] = argv;
  if (group !== 'keys' || !cmd || !['show', 'rotate-admin', 'rotate-anon', 'rotate-jwt'].includes(cmd)) {
    process.stdout.write(`${USAGE}\n`);
    return group === undefined || group === 'help' || group === '--help' ? 0 : 2;
  }
  const config = loadConfig(readEnv());
  const db = await openDb(config);
  try {
    await migrate(db);
    switch (cmd) {
      case 'show': {
        const key = config.credentials.anonKey ?? (await storedAnonKey(db));
        process.stdout.write(key ? `anon key: ${key}\n` : 'No anon key yet: start the server once to generate the keys.\n');
        if (config.credentials.anonKey) process.stdout.write('(from the ANON_KEY environment variable)\n');
        break;
      }
      case 'rotate-admin':
        process.stdout.write(`New admin API key (shown only now; store it safely):\n${await rotateAdminKey(db)}\n`);
        if (config.credentials.adminApiKey) process.stdout.write('Note: ADMIN_API_KEY is set in the environment and still overrides the stored key.\n');
        break;
      case 'rotate-anon':
        process.stdout.write(`New anon key:\n${await rotateAnonKey(db)}\n`);
        if (config.credentials.anonKey) process.stdout.write('Note: ANON_KEY is set in the environment and still overrides the stored key.\n');
        break;
      case 'rotate-jwt':
        await rotateJwtSecret(db);
        process.stdout.write('New JWT secret stored. Restart the servers; every user must sign in again.\n');
        if (config.credentials.jwtSecret) process.stdout.write('Note: JWT_SECRET is set in the environment and still overrides the stored secret.\n');
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
    process.stderr.write(`${err instanceof ConfigError ? err.message : `plinth: ${err instanceof Error ? err.message : String(err)}`}\n`);
    process.exit(1);
  },
);
