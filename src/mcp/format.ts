// Compact tool results: tokens are the agent's budget. Rows become a Markdown table with long
// cells cut, a page at a time, and the last line says how to get the next page.

const MAX_CELL = 120;
const MAX_TEXT = 60_000;

function cell(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  const flat = s.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
  return flat.length > MAX_CELL ? `${flat.slice(0, MAX_CELL - 1)}…` : flat;
}

/** Rows as a Markdown table (columns from the first rows), with a paging line. */
export function table(rows: readonly unknown[], page?: { offset: number; limit: number; total?: number }): string {
  const objects = rows.map((r) =>
    r !== null && typeof r === 'object' && !Array.isArray(r) ? (r as Record<string, unknown>) : { value: r },
  );
  const more = page ? pagingLine(page, rows.length) : '';
  if (objects.length === 0) return `(no rows)${more}`;
  const columns = [...new Set(objects.slice(0, 50).flatMap((o) => Object.keys(o)))];
  const lines = [
    `| ${columns.join(' | ')} |`,
    `|${columns.map(() => '---').join('|')}|`,
    ...objects.map((o) => `| ${columns.map((c) => cell(o[c])).join(' | ')} |`),
  ];
  return truncate(lines.join('\n')) + more;
}

function pagingLine(page: { offset: number; limit: number; total?: number }, count: number): string {
  const end = page.offset + count;
  const total = page.total;
  if (total !== undefined)
    return `\n${count ? `rows ${page.offset + 1}-${end}` : 'no rows'} of ${total}${end < total ? `; next page: offset=${end}` : ''}`;
  return count === page.limit ? `\nmore may follow: offset=${end}` : '';
}

/** Text cut to what an agent can take in one result, saying so when cut. */
export function truncate(text: string, max = MAX_TEXT): string {
  return text.length <= max
    ? text
    : `${text.slice(0, max)}\n… (cut at ${max} characters of ${text.length}; ask for less, e.g. a smaller limit)`;
}

/** A value as one-line JSON, cut when long. */
export function json(value: unknown): string {
  return truncate(JSON.stringify(value));
}
