import { AppError } from '../errors/index.js';
import { safe } from './ident.js';
import { notExposed } from './scopes.js';

/** The `Prefer` header of a records request (PostgREST names; unknown preferences are ignored). */
export interface Prefer {
  /** `return=`: minimal (no body), representation (the rows), headers-only (no body). null: not given. */
  return: 'minimal' | 'representation' | 'headers-only' | null;
  /** `count=`: every kind is answered with the exact count in Content-Range. */
  count: 'exact' | 'planned' | 'estimated' | null;
  /** `missing=default`: with `columns=`, a key missing in a row takes the column default, not null. */
  missingDefault: boolean;
  /** `resolution=`: an insert becomes an upsert. */
  resolution: 'merge' | 'ignore' | null;
  /** `tx=rollback`: run the request, answer, and roll back. */
  rollback: boolean;
  /** Shorthand for `return=representation`. */
  representation: boolean;
  /** `handling=strict` + `max-affected=N`: more affected rows than N is a 400 PGRST124 and nothing changes (lenient: ignored, as in PostgREST). */
  maxAffected: number | null;
}

/** Parses one or more Prefer headers (`a=b, c=d`). */
export function parsePrefer(header: string | string[] | undefined): Prefer {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  const values = new Map<string, string>();
  for (const part of text.split(/[,;]/)) {
    const [k, v] = part.trim().toLowerCase().split('=');
    if (k && v !== undefined) values.set(k.trim(), v.trim());
  }
  const ret = values.get('return');
  const count = values.get('count');
  const resolution = values.get('resolution');
  const prefer: Prefer = {
    return: ret === 'minimal' || ret === 'representation' || ret === 'headers-only' ? ret : null,
    count: count === 'exact' || count === 'planned' || count === 'estimated' ? count : null,
    missingDefault: values.get('missing') === 'default',
    resolution: resolution === 'merge-duplicates' ? 'merge' : resolution === 'ignore-duplicates' ? 'ignore' : null,
    rollback: values.get('tx') === 'rollback',
    representation: false,
    maxAffected:
      values.get('handling') === 'strict' && /^\d{1,9}$/.test(values.get('max-affected') ?? '')
        ? Number(values.get('max-affected'))
        : null,
  };
  prefer.representation = prefer.return === 'representation';
  return prefer;
}

/** The `Preference-Applied` header value for what was honoured, or undefined. */
export function preferenceApplied(p: Prefer): string | undefined {
  const applied = [
    p.return && `return=${p.return}`,
    p.count && `count=${p.count}`,
    p.missingDefault && 'missing=default',
    p.resolution && `resolution=${p.resolution === 'merge' ? 'merge-duplicates' : 'ignore-duplicates'}`,
    p.rollback && 'tx=rollback',
    p.maxAffected !== null && `handling=strict, max-affected=${p.maxAffected}`,
  ].filter(Boolean);
  return applied.length ? applied.join(', ') : undefined;
}

/**
 * Parses a `Range: first-last` header (`items=first-last` too; `Range-Unit` must be items if
 * given) into offset and limit. Anything else is a 416 that explains the header.
 */
export function parseRange(
  header: string | undefined,
  unit: string | undefined,
  maxLimit = 1000,
): { offset: number; limit: number } | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  if (unit !== undefined && unit.trim().toLowerCase() !== 'items') {
    throw new AppError('INVALID_RANGE', {
      message: `Range-Unit "${safe(unit)}" is not supported; records are counted in items.`,
      pgrstCode: 'PGRST103',
    });
  }
  const m = /^\s*(?:items=)?(\d{1,10})-(\d{0,10})\s*$/.exec(header);
  if (!m)
    throw new AppError('INVALID_RANGE', {
      message: `The Range header "${safe(header)}" must look like "0-9" (first-last item, from 0).`,
      pgrstCode: 'PGRST103',
    });
  const start = Number(m[1]);
  const end = m[2] === '' ? start + maxLimit - 1 : Number(m[2]);
  if (end < start)
    throw new AppError('INVALID_RANGE', {
      message: `The Range header "${safe(header)}" ends before it starts.`,
      pgrstCode: 'PGRST103',
    });
  return { offset: start, limit: Math.min(end - start + 1, maxLimit) };
}

/** `first-last/total` for a page, `*\/total` for an empty one. */
export function contentRange(offset: number, count: number, total: number | null): string {
  return count > 0 ? `${offset}-${offset + count - 1}/${total ?? '*'}` : `*/${total ?? '*'}`;
}

/**
 * The schema of a request (postgrest-js `.schema(s)`): `Accept-Profile` for GET/HEAD,
 * `Content-Profile` for writes and POST RPC, as PostgREST. Absent: the first exposed schema
 * (`DB_SCHEMAS`, default public); one not exposed is a 406 PGRST106, never silently public.
 */
export function checkProfile(
  headers: Record<string, string | string[] | undefined>,
  exposed: readonly string[] = ['public'],
  write = false,
): string {
  const v = headers[write ? 'content-profile' : 'accept-profile'];
  const value = (Array.isArray(v) ? v[0] : v)?.trim();
  if (!value) return exposed[0] ?? 'public';
  if (!exposed.includes(value)) throw notExposed(value, exposed);
  return value;
}
