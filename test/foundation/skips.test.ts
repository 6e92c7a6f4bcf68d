// The one line at the start of a run naming the suites this machine will skip (issue #39 item 6).
import { describe, expect, it } from 'vitest';
import { skipNotice } from '../helpers/skips.js';

describe('the skip notice of a run', () => {
  it('names what is missing and how to enable it, and nothing that is there', () => {
    const bare = skipNotice({});
    expect(bare).toMatch(/^Skipped on this machine: /);
    expect(bare).toContain('set TEST_DATABASE_URL');
    expect(bare).toContain('set TEST_REDIS_URL');
    const full = skipNotice({ TEST_DATABASE_URL: 'postgres://x', TEST_REDIS_URL: 'redis://x', PLINTH_TEST_NODES: 'n' });
    expect(full ?? '').not.toMatch(/TEST_DATABASE_URL|TEST_REDIS_URL|PLINTH_TEST_NODES/);
  });
});
