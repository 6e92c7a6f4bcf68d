import { describe, expect, it } from 'vitest';
import { jsonBodyParser } from './json-body.js';

const parse = (body: string | Buffer) =>
  new Promise((resolve, reject) =>
    jsonBodyParser({} as never, typeof body === 'string' ? Buffer.from(body) : body, (err, value) => (err ? reject(err) : resolve(value))),
  );
const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

describe('jsonBodyParser', () => {
  it('allows 512 levels of nesting and refuses 513', async () => {
    await expect(parse(nested(512))).resolves.toBeInstanceOf(Array);
    await expect(parse(nested(513))).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/deeper than 512/) });
  });

  it('counts arrays and objects, not brackets inside strings', async () => {
    const text = JSON.stringify({ s: `${'['.repeat(2000)}"${'{'.repeat(600)}\\`, t: nested(600) });
    await expect(parse(text)).resolves.toEqual(JSON.parse(text));
  });

  it('refuses lone surrogates, keeps pairs', async () => {
    await expect(parse('{"a":"\\ud800"}')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(parse('{"a":"x\\udfff"}')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(parse('["\\uD83D\\uDE00"]')).resolves.toEqual(['\u{1F600}']);
  });

  it('refuses bytes that are not UTF-8, empty bodies and prototype keys as INVALID_JSON', async () => {
    await expect(parse(Buffer.from([0x22, 0xc3, 0x28, 0x22]))).rejects.toMatchObject({ code: 'INVALID_JSON', message: expect.stringMatching(/UTF-8/) });
    await expect(parse('')).rejects.toMatchObject({ code: 'INVALID_JSON' });
    await expect(parse('{"__proto__":{"x":1}}')).rejects.toMatchObject({ code: 'INVALID_JSON' });
  });
});
