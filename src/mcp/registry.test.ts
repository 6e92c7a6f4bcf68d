import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { AppError } from '../errors/index.js';
import { ToolSet, errorText } from './registry.js';
import { table, truncate } from './format.js';
import { tool, type ToolContext } from './types.js';

const ctx = { signal: new AbortController().signal } as ToolContext;
const tools = [
  tool<{ n: number; label: string }>({
    name: 'echo',
    description: 'Answers its arguments.',
    input: Type.Object({ n: Type.Integer(), label: Type.String({ default: 'x' }) }),
    readOnly: true,
    run: async (a) => a,
  }),
  tool<Record<string, never>>({
    name: 'boom',
    description: 'Fails.',
    input: Type.Object({}),
    readOnly: false,
    run: async () => {
      throw new Error('secret internals at /etc/x');
    },
  }),
  tool<Record<string, never>>({
    name: 'refused',
    description: 'Fails cleanly.',
    input: Type.Object({}),
    readOnly: false,
    run: async () => {
      throw new AppError('TABLE_NOT_FOUND');
    },
  }),
];

describe('ToolSet', () => {
  it('advertises a defaulted property as optional and applies the default', async () => {
    const set = new ToolSet(tools, false);
    expect(set.listing[0]!.inputSchema.required).toEqual(['n']);
    expect(set.listing[0]!.annotations).toMatchObject({ readOnlyHint: true });
    expect(await set.call('echo', { n: 1 }, ctx)).toEqual({ content: [{ type: 'text', text: '{"n":1,"label":"x"}' }] });
  });

  it('read-only mode offers only read-only tools', () => {
    const set = new ToolSet(tools, true);
    expect(set.listing.map((t) => t.name)).toEqual(['echo']);
    expect(set.has('boom')).toBe(false);
  });

  it('bad arguments, AppErrors and unknown errors are error results; unknown ones show nothing internal', async () => {
    const set = new ToolSet(tools, false);
    const outcomes: boolean[] = [];
    const bad = await set.call('echo', { n: 'one' }, ctx, (ok) => outcomes.push(ok));
    expect(bad).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/^INVALID_ARGUMENTS: \/n /) }],
    });
    const refused = await set.call('refused', {}, ctx);
    expect((refused.content as Array<{ text: string }>)[0]!.text).toMatch(
      /^TABLE_NOT_FOUND \(404\): No such table\.\nNext: /,
    );
    let unexpected: unknown;
    const boom = await set.call('boom', {}, ctx, (_ok, err) => (unexpected = err));
    expect(boom.isError).toBe(true);
    expect(JSON.stringify(boom)).not.toContain('secret internals');
    expect(unexpected).toBeInstanceOf(Error);
    expect(outcomes).toEqual([false]);
    expect(errorText(new AppError('TABLE_NOT_FOUND'))).toContain('Next:');
  });
});

describe('compact results', () => {
  it('a table with cut cells, escaped pipes and a paging line', () => {
    const text = table([{ a: 'x|y', b: 'z'.repeat(300) }], { offset: 0, limit: 1, total: 5 });
    expect(text).toContain('| a | b |');
    expect(text).toContain('x\\|y');
    expect(text).toContain('…');
    expect(text).toMatch(/rows 1-1 of 5; next page: offset=1$/);
    expect(table([], { offset: 0, limit: 10, total: 0 })).toBe('(no rows)\nno rows of 0');
    expect(truncate('abcdef', 3)).toMatch(/^abc\n… \(cut at 3 characters of 6/);
  });
});
