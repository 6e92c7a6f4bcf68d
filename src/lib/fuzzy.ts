// The closest string of a set, as the fuzzyset library PostgREST uses for its "Perhaps you
// meant" hints (Haskell `fuzzyset` 0.2, after fuzzyset.js): cosine similarity of the character
// grams (sizes 3, then 2) of the normalised strings, the best 50 re-scored by normalised
// Levenshtein distance of the lower-cased strings. Same texts in, same suggestion out.

/** Lower case, only letters, digits, white space and commas (fuzzyset's `normalized`). */
const normalized = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}\s,]/gu, '');

/** The counts of the grams of `size` characters of `-normalized-`. */
function gramVector(value: string, size: number): Map<string, number> {
  const str = `-${normalized(value)}-`;
  const v = new Map<string, number>();
  for (let i = 0; i + size <= str.length; i++) {
    const g = str.slice(i, i + size);
    v.set(g, (v.get(g) ?? 0) + 1);
  }
  return v;
}

const magnitude = (v: Map<string, number>) => Math.sqrt([...v.values()].reduce((s, n) => s + n * n, 0));

/** Levenshtein distance of two strings, by code point. */
function levenshtein(a: string, b: string): number {
  const s = [...a];
  const t = [...b];
  let prev = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const row = [i];
    for (let j = 1; j <= t.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (s[i - 1] === t[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[t.length]!;
}

/** 1 - distance / longer length: 1 for equal strings (text-metrics' `levenshteinNorm`). */
function similarity(a: string, b: string): number {
  const len = Math.max([...a].length, [...b].length);
  return len === 0 ? 1 : 1 - levenshtein(a, b) / len;
}

/** The matches of `query` among `entries` with grams of `size`, best first, scored ≥ minScore. */
function matches(entries: string[], query: string, size: number, minScore: number): Array<[number, string]> {
  const q = gramVector(query, size);
  const qm = magnitude(q);
  const scored: Array<[number, string]> = [];
  for (const entry of entries) {
    const e = gramVector(entry, size);
    let dot = 0;
    for (const [g, n] of q) dot += n * (e.get(g) ?? 0);
    // Only entries sharing a gram are candidates, as in the library's gram index.
    if (dot > 0) scored.push([dot / (qm * magnitude(e)), entry]);
  }
  scored.sort((a, b) => b[0] - a[0]);
  const key = query.toLowerCase();
  return scored
    .slice(0, 50)
    .map(([, entry]): [number, string] => [similarity(key, entry.toLowerCase()), entry])
    .sort((a, b) => b[0] - a[0])
    .filter(([score]) => score >= minScore);
}

/** The entry closest to `query` with a score of at least `minScore` (0.33 as fuzzyset's `getOne`), or null. */
export function closest(entries: readonly string[], query: string, minScore = 0.33): string | null {
  const key = query.toLowerCase();
  const exact = entries.find((e) => e.toLowerCase() === key);
  if (exact !== undefined) return exact;
  // The first of the entries equal but for case stands for them all, as in the library's set.
  const first = new Map<string, string>();
  for (const e of entries) if (!first.has(e.toLowerCase())) first.set(e.toLowerCase(), e);
  const unique = [...first.values()];
  for (const size of [3, 2]) {
    const found = matches(unique, query, size, minScore);
    if (found.length) return found[0]![1];
  }
  return null;
}
