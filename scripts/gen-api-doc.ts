// Writes docs/api.md from the OpenAPI document of the routes. A test fails when the two differ.
// Starts the app on a throw-away embedded database in a temp dir (the routes need their deps).
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/index.js';
import { buildDeps } from '../src/deps.js';
import { buildApp } from '../src/app.js';
import { renderApiDoc, type OpenApiDocument } from '../src/http/api-doc.js';

const dir = mkdtempSync(path.join(tmpdir(), 'plinth-api-doc-'));
chmodSync(dir, 0o711); // as root the embedded Postgres runs as an unprivileged user
try {
  const deps = await buildDeps(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', RATE_LIMIT_PLAN: 'off' }));
  try {
    const app = await buildApp(deps, { logStream: false });
    await app.ready();
    writeFileSync(new URL('../docs/api.md', import.meta.url), renderApiDoc(app.swagger() as OpenApiDocument));
    await app.close();
  } finally {
    await deps.close();
  }
  console.log('docs/api.md written');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
