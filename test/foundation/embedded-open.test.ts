// Opening the embedded cluster at start: main.ts launches postgres before the rest of the code
// loads (db/launch.ts), and on a cluster made before, the pool's first query is the check that
// the database `plinth` exists.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { launchCluster, openEmbedded, startCluster } from '../../src/db/embedded/index.js';

describe('opening the embedded cluster', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'plinth-embedded-open-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('a cluster whose database `plinth` is gone: the next open makes it again', async () => {
    const dir = path.join(root, 'dropped');
    await (await openEmbedded({ dir })).close();
    const cluster = await startCluster({ dir });
    const c = new pg.Client({ connectionString: cluster.url('postgres') });
    await c.connect();
    await c.query('drop database plinth');
    await c.end();
    await cluster.stop();
    const db = await openEmbedded({ dir });
    try {
      expect((await db.query<{ name: string }>('select current_database() as name')).rows).toEqual([
        { name: 'plinth' },
      ]);
    } finally {
      await db.close();
    }
  }, 120_000);

  it('a launched cluster is opened as it is: the same postgres, its lines going where the opener says', async () => {
    const dir = path.join(root, 'launched');
    const launched = launchCluster({ dir });
    const pid = (await launched).supervisor.pid;
    const lines: string[] = [];
    const db = await openEmbedded({ dir, launched, onLog: (l) => lines.push(l) });
    try {
      expect(db.cluster.supervisor.pid).toBe(pid);
      await db.query("do $$ begin raise log 'launched-cluster-line'; end $$").catch(() => {});
      const deadline = Date.now() + 5000;
      while (!lines.some((l) => l.includes('launched-cluster-line')) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      expect(lines.some((l) => l.includes('launched-cluster-line'))).toBe(true);
    } finally {
      await db.close();
    }
  }, 120_000);
});
