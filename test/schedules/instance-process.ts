// One more Plinth instance as its own process (for the exactly-once test): the app's deps on
// the given database, with the schedules clock and job workers running, until it is killed.
import { loadConfig } from '../../src/config/index.js';
import { buildDeps } from '../../src/deps.js';
import { openPostgres } from '../../src/db/postgres.js';

const env = process.env;
const db = await openPostgres(env.PLINTH_TEST_DB_URL!, { max: 4 });
const config = loadConfig({
  DATA_DIR: env.PLINTH_TEST_DATA_DIR,
  LOG_LEVEL: 'silent',
  RATE_LIMIT_PLAN: 'off',
  ADMIN_API_KEY: env.PLINTH_TEST_ADMIN_KEY,
  PORT: '0',
  OUTBOUND_ALLOW_HOSTS: env.OUTBOUND_ALLOW_HOSTS,
  SCHEDULE_TICK_MS: env.SCHEDULE_TICK_MS,
});
await buildDeps(config, { db, engine: 'postgres' });
process.stdout.write(`ready ${process.pid}\n`);
setInterval(() => {}, 60_000);
