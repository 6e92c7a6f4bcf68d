// Search over the docs by section: a page of 70 KB is too much to read for one answer, so
// each page is cut at its headings and the sections that match the query come back whole.
import type { DocEntry } from './docs-bundle.js';

export interface DocSection {
  page: string;
  /** The heading path, e.g. "Database › Admin SQL". */
  heading: string;
  text: string;
}

export interface SectionHit extends DocSection {
  score: number;
}

/** A page cut at its headings (#–####), headings inside fenced code ignored. */
export function sectionsOf(doc: DocEntry): DocSection[] {
  const out: DocSection[] = [];
  const path: string[] = [];
  let lines: string[] = [];
  let fenced = false;
  const flush = () => {
    const text = lines.join('\n').trim();
    if (text) out.push({ page: doc.name, heading: path.filter(Boolean).join(' › ') || doc.title, text });
    lines = [];
  };
  for (const line of doc.content.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const h = fenced ? null : /^(#{1,4})\s+(.+)$/.exec(line);
    if (h) {
      flush();
      const level = h[1]!.length;
      path.length = level - 1;
      path[level - 1] = h[2]!.trim();
    }
    lines.push(line);
  }
  flush();
  return out;
}

const words = (s: string) => s.toLowerCase().match(/[\p{L}\p{N}_-]{2,}/gu) ?? [];

/**
 * The sections that match `query` best: every word of the query counts once per occurrence in
 * the text and five times in the heading; a section must contain every word (or, if none
 * does, most of them). Highest score first.
 */
export function searchSections(sections: readonly DocSection[], query: string, limit: number): SectionHit[] {
  const terms = [...new Set(words(query))];
  if (!terms.length) return [];
  const scored = sections.map((s) => {
    const text = s.text.toLowerCase();
    const heading = s.heading.toLowerCase();
    let score = 0;
    let matched = 0;
    for (const t of terms) {
      const inText = text.split(t).length - 1;
      const inHeading = heading.split(t).length - 1;
      if (inText + inHeading) matched++;
      score += Math.min(inText, 20) + 5 * inHeading;
    }
    return { ...s, score, matched };
  });
  const best = Math.max(0, ...scored.map((s) => s.matched));
  const need = best === terms.length ? terms.length : Math.max(1, Math.ceil(terms.length / 2));
  return scored
    .filter((s) => s.matched >= need && s.score > 0)
    .sort((a, b) => b.matched - a.matched || b.score - a.score)
    .slice(0, limit)
    .map(({ matched: _m, ...s }) => s);
}
