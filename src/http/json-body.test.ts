import { describe, expect, it } from 'vitest';
import { jsonBodyParser } from './json-body.js';

const parse = (body: string | Buffer) =>
  new Promise((resolve, reject) =>
    jsonBodyParser({} as never, typeof body === 'string' ? Buffer.from(body) : body, (err, value) =>
      err ? reject(err) : resolve(value),
    ),
  );
const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

describe('jsonBodyParser', () => {
  it('allows 512 levels of nesting and refuses 513', async () => {
    await expect(parse(nested(512))).resolves.toBeInstanceOf(Array);
    await expect(parse(nested(513))).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(/deeper than 512/),
    });
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
    await expect(parse(Buffer.from([0x22, 0xc3, 0x28, 0x22]))).rejects.toMatchObject({
      code: 'INVALID_JSON',
      message: expect.stringMatching(/UTF-8/),
    });
    await expect(parse('')).rejects.toMatchObject({ code: 'INVALID_JSON' });
    await expect(parse('{"__proto__":{"x":1}}')).rejects.toMatchObject({ code: 'INVALID_JSON' });
  });

  it('refuses number literals a double cannot hold exactly, naming them', async () => {
    const refused = [
      '9007199254740993',
      '-9007199254740993',
      '12345678901234567890.123456789',
      '9223372036854775807',
      '1e400', // Infinity
      '-1.7976931348623159e308',
      '1e-400', // 0
      '1.2e-323', // a subnormal: fewer digits of precision
      '90071992.54740993', // 16 digits split by the point
    ];
    for (const n of refused) {
      await expect(parse(`{"s":"x\\"","v":[1,${n}]}`), n).rejects.toMatchObject({
        code: 'INVALID_INPUT',
        message: `The number ${n} cannot be kept exactly (JSON numbers are read as 64-bit floats); send it as a string: "${n}".`,
      });
    }
    await expect(parse('9007199254740993')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    const long = `0.${'0'.repeat(400)}1`;
    await expect(parse(`[${long}]`)).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: `The number ${long.slice(0, 40)}… (${long.length} characters) cannot be kept exactly (JSON numbers are read as 64-bit floats); send it as a JSON string (in quotes) instead.`,
    });
  });

  it('keeps numbers whose value is exactly that of their double, and any digits inside strings', async () => {
    const accepted: Array<[string, number]> = [
      ['0.30000000000000004', 0.30000000000000004],
      ['1e21', 1e21],
      ['5e-324', 5e-324],
      ['-0', -0],
      ['1.10', 1.1],
      ['1.100000000000000000000', 1.1],
      ['100000000000000000000', 1e20],
      ['9007199254740992', 9007199254740992],
      ['1234567.123456789', 1234567.123456789],
      ['1.0E+2', 100],
      ['1.7976931348623157e308', Number.MAX_VALUE],
      ['0e-999', 0],
      [`1${'0'.repeat(400)}e-400`, 1],
    ];
    for (const [n, value] of accepted) await expect(parse(`{"v":[${n}]}`), n).resolves.toEqual({ v: [value] });
    const strings = ['9007199254740993', '1e400', 'a\\"12345678901234567890', 'x\\\\'];
    const text = `[${strings.map((x) => `"${x}"`).join(',')}, 12]`;
    await expect(parse(text)).resolves.toEqual(JSON.parse(text));
  });
});
