import { describe, expect, it } from 'vitest';
import { AgentDocs } from './docs.js';

describe('the docs for agents', () => {
  it('reads the bundle on the first question, not when made (a start does not pay for it), and once', () => {
    let reads = 0;
    const docs = new AgentDocs(() => {
      reads++;
      return { docs: [{ name: 'database', title: 'Database', content: '# Database\n\nTables and rows.' }] };
    });
    expect(reads).toBe(0);
    expect(docs.list().map((d) => d.name)).toContain('database');
    expect(docs.page('database', 'http://localhost:7130')).toContain('Tables and rows.');
    expect(docs.search('rows', 5, 'http://localhost:7130').length).toBeGreaterThan(0);
    expect(reads).toBe(1);
  });
});
