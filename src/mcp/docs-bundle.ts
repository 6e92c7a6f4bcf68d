// The docs for agents, bundled from docs/*.md. `npm run build` writes the bundle into the
// build (dist/mcp/agent-docs.json, scripts/build.mjs); run from src/ (tests, dev)
// the same function reads docs/ directly, so both are the same text.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { codePath, PROJECT_ROOT } from '../lib/code-dir.js';

export interface DocEntry {
  /** The file name without .md (`database`), or `agents-<name>` for docs/agents/*.md. */
  name: string;
  title: string;
  content: string;
}

export interface DocBundle {
  docs: DocEntry[];
}

const titleOf = (md: string, fallback: string) => /^#\s+(.+)$/m.exec(md)?.[1]?.trim() ?? fallback;

/** Reads every Markdown page of `docsDir` and of its `agents/` folder. */
export function bundleDocs(docsDir: string): DocBundle {
  const read = (dir: string, prefix: string) =>
    existsSync(dir)
      ? readdirSync(dir)
          .filter((f) => f.endsWith('.md'))
          .sort()
          .map((f) => {
            const content = readFileSync(path.join(dir, f), 'utf8');
            const name = prefix + f.slice(0, -3);
            return { name, title: titleOf(content, name), content };
          })
      : [];
  return { docs: [...read(docsDir, ''), ...read(path.join(docsDir, 'agents'), 'agents-')] };
}

/** The bundle written at build time, else docs/ of the source tree. */
export function loadDocBundle(): DocBundle {
  const built = codePath('mcp', 'agent-docs.json');
  if (existsSync(built)) return JSON.parse(readFileSync(built, 'utf8')) as DocBundle;
  return bundleDocs(path.join(PROJECT_ROOT, 'docs'));
}
