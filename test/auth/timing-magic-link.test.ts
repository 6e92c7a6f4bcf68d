import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { median } from '../../bench/lib.js';

const exec = promisify(execFile);

/** The prober: POSTs each [email, ip] in turn, each answer read whole; prints the times in ms. */
const CLIENT = `
const { url, redirectTo, asks } = JSON.parse(process.argv[1]);
const out = [];
for (const [email, ip] of asks) {
  const started = performance.now();
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.' + ((ip >> 16) & 255) + '.' + ((ip >> 8) & 255) + '.' + (ip & 255) },
    body: JSON.stringify({ email, redirectTo }),
  });
  const ms = performance.now() - started;
  await r.arrayBuffer();
  if (r.status !== 200) throw new Error('answered ' + r.status);
  out.push(ms);
}
console.log(JSON.stringify(out));
`;

// Issue 40: asking for a magic link must cost the server the same for an address with an
// account and one without, or the answer's timing tells which addresses have accounts (the
// probe measured medians of 10.4 ms against 5.1 ms). Medians of interleaved requests, as in
// timing.test.ts: issuing and storing the link before answering made known addresses about
// twice as slow, far outside the bound.
describe.each(backends())('magic-link timing (%s)', (backend) => {
  const N = 21;
  const ROUNDS = 3;
  const APP = 'http://app.test/auth/callback';
  let t: TestApp;
  const run = Date.now().toString(36);
  const known = (round: number, i: number) => `ml-timing-${run}-${round}-${i}@example.com`;

  beforeAll(async () => {
    t = await startApp(backend, { TRUST_PROXY: 'true', AUTH_REDIRECT_URLS: APP });
    // One account per request: the per-address limit of mailed links stays out of the way.
    await t.deps.db.query(
      `insert into auth.users (email, password_hash, email_verified)
       select format('ml-timing-%s-%s-%s@example.com', $1::text, r, i), 'x', true from generate_series(-1, $2) r, generate_series(0, $3) i`,
      [run, ROUNDS - 1, N - 1],
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  /**
   * Asks for links in `asks`' order from a client in a process of its own, as a remote prober
   * would, and answers each answer's time. In this process the client would share the server's
   * event loop, so the work the server does after answering (the link issued and mailed) would
   * delay its reading of the answer and be counted as the answer's time.
   */
  async function timed(asks: Array<[email: string, ip: number]>): Promise<number[]> {
    const input = JSON.stringify({ url: `${t.url}/api/auth/magic-link`, redirectTo: APP, asks });
    const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', CLIENT, input]);
    return JSON.parse(stdout);
  }

  it('an address with an account and one without take about the same time', async () => {
    await timed(
      [0, 1, 2].flatMap((i) => [
        [known(-1, i), 1000 + 2 * i] as [string, number],
        [`warm-${run}-${i}@example.com`, 1001 + 2 * i] as [string, number],
      ]),
    );
    const seen: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Interleaved, each pair in turn order: known first, then unknown first.
      const asks: Array<[string, number]> = [];
      const isKnown: boolean[] = [];
      for (let i = 0; i < N; i++) {
        const ip = 10_000 * (round + 1) + 2 * i;
        const k: [string, number] = [known(round, i), ip];
        const u: [string, number] = [`nobody-${run}-${round}-${i}@example.com`, ip + 1];
        asks.push(...(i % 2 ? [k, u] : [u, k]));
        isKnown.push(...(i % 2 ? [true, false] : [false, true]));
      }
      const ms = await timed(asks);
      const yes = ms.filter((_, n) => isKnown[n]);
      const no = ms.filter((_, n) => !isKnown[n]);
      const ratio = median(no) / median(yes);
      seen.push(
        `round ${round + 1}: median unknown ${median(no).toFixed(1)} ms, known ${median(yes).toFixed(1)} ms, ratio ${ratio.toFixed(2)}`,
      );
      if (ratio > 0.75 && ratio < 1.33) return;
    }
    expect.fail(`an address with an account is told apart by time:\n${seen.join('\n')}`);
  });
});
