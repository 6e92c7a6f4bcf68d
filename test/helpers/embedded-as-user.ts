// Run by test/foundation/embedded.test.ts as an ordinary (non-root) user:
// starts the embedded database in argv[2], queries it, stops it, prints one JSON line.
import { statSync } from 'node:fs';
import { openEmbedded } from '../../src/db/embedded/index.js';

const dir = process.argv[2]!;
const db = await openEmbedded({ dir });
const { rows } = await db.query<{ one: number }>('select 1 as one');
const owner = statSync(dir).uid;
await db.close();
process.stdout.write(`${JSON.stringify({ uid: process.getuid?.(), owner, rows })}\n`);
