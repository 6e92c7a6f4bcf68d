// Runs Plinth's command line (`npm run plinth -- …`, src/cli.ts) as a user would, on the
// embedded database and local storage whatever the test run's environment says.
import { execFile } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Runs `src/cli.ts <args>` with `env`; answers its exit code and output (stdout then stderr). */
export function cli(args: string[], env: Record<string, string>): Promise<{ code: number; out: string }> {
  const base = { ...process.env };
  delete base.DATABASE_URL;
  delete base.S3_BUCKET;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli.ts', ...args],
      { cwd: ROOT, env: { ...base, LOG_LEVEL: 'silent', ...env } },
      (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` });
      },
    );
  });
}
