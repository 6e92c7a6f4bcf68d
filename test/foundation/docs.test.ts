// The documentation a clone carries: docs/api.md is current with the routes, every relative
// link and anchor in README.md and docs/ resolves, nothing points outside the repository, and
// the examples use the port Plinth listens on.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { renderApiDoc, type OpenApiDocument } from '../../src/http/api-doc.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const mdUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const full = path.join(dir, n);
    return statSync(full).isDirectory() ? mdUnder(full) : n.endsWith('.md') ? [full] : [];
  });
const DOCS = [path.join(ROOT, 'README.md'), ...mdUnder(path.join(ROOT, 'docs'))];
const rel = (f: string) => path.relative(ROOT, f);

/** The text outside fenced code blocks and inline code spans. */
function prose(md: string): string {
  return md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchors for the headings of a Markdown file (and explicit `<a id|name>` anchors). */
function anchorsOf(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const text = md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const m of text.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = m[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  for (const m of md.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1]!);
  return out;
}

/** Every relative link of `file` that does not resolve, as "file: link (why)". */
function brokenLinks(file: string): string[] {
  const md = readFileSync(file, 'utf8');
  const broken: string[] = [];
  for (const m of prose(md).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const link = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto: ...
    const [target, anchor] = link.split('#') as [string, string | undefined];
    const dest = target ? path.resolve(path.dirname(file), decodeURIComponent(target)) : file;
    if (dest !== ROOT && !dest.startsWith(ROOT + path.sep))
      broken.push(`${rel(file)}: ${link} (outside the repository)`);
    else if (!existsSync(dest)) broken.push(`${rel(file)}: ${link} (no such file)`);
    else if (
      anchor !== undefined &&
      dest.endsWith('.md') &&
      !anchorsOf(readFileSync(dest, 'utf8')).has(decodeURIComponent(anchor))
    ) {
      broken.push(`${rel(file)}: ${link} (no heading with anchor #${anchor} in ${rel(dest)})`);
    }
  }
  return broken;
}

describe('documentation', () => {
  it("computes GitHub's anchors", () => {
    const a = anchorsOf(
      '# Sign-in with providers (OAuth / OpenID Connect)\n## `GET /api/x`\n## Faults\n## Faults\n```\n# not a heading\n```\n',
    );
    expect([...a]).toEqual(['sign-in-with-providers-oauth--openid-connect', 'get-apix', 'faults', 'faults-1']);
  });

  it('has every relative link and anchor of README.md and docs/ resolving inside the repository', () => {
    expect(DOCS.length).toBeGreaterThan(5);
    const broken = DOCS.flatMap(brokenLinks);
    expect(broken, `broken links:\n${broken.join('\n')}`).toEqual([]);
  });

  it('cites no file outside the repository (a clone has none of them)', () => {
    const outside = /\.\.\/shared\/|\bshared\/(?:spec|clients)\/|\b(?:DESIGN|STYLE)\.md\b/;
    const found = DOCS.flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .flatMap((line, i) => (outside.test(line) ? [`${rel(f)}:${i + 1}: ${line.trim().slice(0, 160)}`] : [])),
    );
    expect(found, `citations of files outside the repository:\n${found.join('\n')}`).toEqual([]);
  });

  it('uses the port Plinth listens on (7130) in its local examples', () => {
    const found = DOCS.flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/\b(?:localhost|127\.0\.0\.1):(\d+)\/(?:api|dashboard|functions)\b/g)]
        .filter((m) => m[1] !== '7130')
        .map((m) => `${rel(f)}: ${m[0]}`),
    );
    expect(found, `examples on another port:\n${found.join('\n')}`).toEqual([]);
  });

  describe('docs/api.md', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp('embedded');
      await t.app.ready();
    });
    afterAll(() => t?.close());

    it('is the API reference of the routes as they are (run npm run docs:api)', () => {
      const doc = readFileSync(path.join(ROOT, 'docs/api.md'), 'utf8');
      expect(doc, 'docs/api.md is out of date: run npm run docs:api').toBe(
        renderApiDoc(t.app.swagger() as OpenApiDocument),
      );
    });
  });
});
