import { describe, expect, it } from 'vitest';
import { buildSerializer, buildValidator } from './compilers.js';

const schema = {
  type: 'object',
  properties: { n: { type: 'integer' }, tag: { type: 'string', default: 'none' } },
  required: ['n'],
};

describe('schema compilers', () => {
  it('compile a validator only on its first call, then keep it; errors and schemaEnv come from Ajv', () => {
    const factory = buildValidator({} as never, {});
    const query = factory({ schema, httpPart: 'querystring' } as never) as ((d: unknown) => boolean) & {
      errors?: unknown;
      schemaEnv?: unknown;
    };
    expect(typeof query).toBe('function');
    const data: Record<string, unknown> = { n: '4' };
    expect(query(data)).toBe(true);
    expect(data).toEqual({ n: 4, tag: 'none' }); // coerced and defaulted, as before
    expect(query.schemaEnv).toBeTruthy();
    expect(query({ n: 'x' })).toBe(false);
    expect(query.errors).toEqual([expect.objectContaining({ instancePath: '/n', keyword: 'type' })]);
    const body = factory({ schema, httpPart: 'body' } as never) as (d: unknown) => boolean;
    expect(body({ n: '4' })).toBe(false); // bodies are not coerced
  });

  it('do not compile an invalid schema until it is used', () => {
    const factory = buildValidator({} as never, {});
    const bad = factory({ schema: { type: 'no-such-type' }, httpPart: 'body' } as never) as (d: unknown) => boolean;
    expect(() => bad({})).toThrow();
    const serialize = buildSerializer(
      {} as never,
      {} as never,
    )({ schema: { type: 'object', properties: {} } } as never);
    expect(serialize({ a: 1 })).toBe('{}');
  });

  it('serialize with fast-json-stringify, compiled on the first response', () => {
    const serialize = buildSerializer({} as never, {} as never)({ schema } as never);
    expect(serialize({ n: 2, extra: 'dropped' })).toBe('{"n":2,"tag":"none"}');
    expect(serialize({ n: 3, tag: 'x' })).toBe('{"n":3,"tag":"x"}');
  });
});
