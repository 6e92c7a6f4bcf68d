import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { expectError, uniqueEmail } from './util.js';

/** The full-width (U+FF01–U+FF5E) spelling of printable ASCII, e.g. `C` → `Ｃ`. */
const fullWidth = (s: string) => s.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));

/** `email` with `ch` inserted after the first character of the local part. */
const withInside = (email: string, ch: string) => email[0] + ch + email.slice(1);

// Addresses that look like another one: sign-up must not make them separate accounts.
describe.each(backends())('look-alike email addresses (%s)', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(backend);
  });
  afterAll(async () => {
    await t?.close();
  });

  const signup = (email: string, password = 'password-1') =>
    call(t, 'POST', '/api/auth/signup', { body: { email, password } });
  const signin = (email: string, password: string) =>
    call(t, 'POST', '/api/auth/signin', { body: { email, password } });
  const countUsers = async () =>
    (await t.deps.db.query<{ n: number }>('select count(*)::int as n from auth.users')).rows[0]!.n;

  it.each([
    ['a zero-width space', '\u200b'],
    ['a zero-width joiner', '\u200d'],
    ['a zero-width non-joiner', '\u200c'],
    ['a byte-order mark', '\ufeff'],
    ['a word joiner', '\u2060'],
    ['a soft hyphen', '\u00ad'],
    ['a right-to-left override', '\u202e'],
    ['a left-to-right isolate', '\u2066'],
    ['a Hangul filler', '\u3164'],
    ['a variation selector', '\ufe0f'],
    ['a no-break space', '\u00a0'],
    ['an ideographic space', '\u3000'],
    ['a line separator', '\u2028'],
    ['a tab', '\t'],
    ['a private-use character', '\ue000'],
    ['an unassigned code point', '\u0378'],
    ['a lone surrogate', '\ud800'],
    ['a tag character', '\u{e0041}'],
  ])('refuses sign-up with %s in the address (400 INVALID_INPUT, nothing stored)', async (_name, ch) => {
    const email = uniqueEmail('inv');
    const before = await countUsers();
    expectError(await signup(withInside(email, ch)), 400, 'INVALID_INPUT');
    expectError(await signup(email.replace('@', `${ch}@`)), 400, 'INVALID_INPUT');
    expectError(await signup(email.replace('@', `@${ch}`)), 400, 'INVALID_INPUT');
    expect(await countUsers()).toBe(before);
  });

  it('the security report: "name\\u200b@example.com" next to "name@example.com" is refused, not a second account', async () => {
    const email = uniqueEmail('zw');
    expect((await signup(email)).status).toBe(200);
    expectError(await signup(email.replace('@', '\u200b@')), 400, 'INVALID_INPUT');
    const { rows } = await t.deps.db.query('select email from auth.users where email like $1', [
      `${email.split('@')[0]}%`,
    ]);
    expect(rows).toEqual([{ email }]);
  });

  it('sign-in with an invisible character answers like an unknown email (401 INVALID_CREDENTIALS), even with the right password', async () => {
    const email = uniqueEmail('zwin');
    expect((await signup(email, 'password-ok')).status).toBe(200);
    const zw = await signin(email.replace('@', '\u200b@'), 'password-ok');
    const unknown = await signin(uniqueEmail('nobody'), 'password-ok');
    expectError(zw, 401, 'INVALID_CREDENTIALS');
    expect(zw.body).toEqual(unknown.body);
  });

  it('a full-width letter is the same address as its ASCII letter: sign-up is 409, sign-in reaches the account', async () => {
    const email = uniqueEmail('cat');
    const a = await signup(email, 'password-ok');
    expect(a.status).toBe(200);
    const lookAlike = fullWidth(email[0]!.toUpperCase()) + email.slice(1); // `Ｃat-…@example.com`
    expect(lookAlike).not.toBe(email);
    expectError(await signup(lookAlike, 'password-2'), 409, 'ALREADY_EXISTS');
    expectError(await signup(fullWidth(email), 'password-2'), 409, 'ALREADY_EXISTS');
    const s = await signin(lookAlike, 'password-ok');
    expect(s.status).toBe(200);
    expect(s.body.user).toMatchObject({ id: a.body.user.id, email });
    const { rows } = await t.deps.db.query('select 1 from auth.users where email = $1', [email]);
    expect(rows).toHaveLength(1);
  });

  it('an address signed up full-width is stored in ASCII, and the ASCII spelling signs in', async () => {
    const email = uniqueEmail('wide');
    const a = await signup(` ${fullWidth(email.toUpperCase())} `, 'password-ok');
    expect(a.status).toBe(200);
    expect(a.body.user.email).toBe(email);
    expect((await signin(email, 'password-ok')).body.user?.id).toBe(a.body.user.id);
    expectError(await signup(email), 409, 'ALREADY_EXISTS');
  });

  it('internationalized addresses still sign up and sign in', async () => {
    for (const local of ['jörg', 'δοκιμή', 'почта', '用户', 'नमस्ते']) {
      const email = `${local}-${uniqueEmail('')}`; // e.g. jörg--m3x…-7@example.com
      const a = await signup(email, 'password-ok');
      expect(a.status, `${email}: ${JSON.stringify(a.body)}`).toBe(200);
      expect(a.body.user.email).toBe(email);
      expect((await signin(email.toUpperCase(), 'password-ok')).body.user?.id).toBe(a.body.user.id);
    }
  });

  it('composed and decomposed spellings of a letter are one address (`ö` and `o` + U+0308)', async () => {
    const composed = `jörg-${uniqueEmail('')}`;
    expect((await signup(composed)).status).toBe(200);
    expectError(await signup(composed.normalize('NFD')), 409, 'ALREADY_EXISTS');
  });

  it('the admin user search folds full-width letters too', async () => {
    const email = uniqueEmail('srch');
    expect((await signup(email)).status).toBe(200);
    const r = await call(t, 'GET', `/api/auth/users?search=${encodeURIComponent(fullWidth(email.split('@')[0]!))}`, {
      headers: { 'x-api-key': t.adminKey },
    });
    expect(r.status).toBe(200);
    expect(r.body.data.map((u: { email: string }) => u.email)).toEqual([email]);
  });
});
