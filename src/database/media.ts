import { AppError } from '../errors/index.js';
import { parse } from 'csv-parse/sync';
import { safe } from './ident.js';
import type { TableMeta } from './schema.js';
import type { Params } from './filters.js';

/** How the rows of a read go out: JSON (array or one object), CSV, JSON without nulls, GeoJSON. */
export type BodyFormat = 'json' | 'csv' | 'stripped' | 'geojson';

/** What the `Accept` header of a read asks for (PostgREST's media types). */
export interface Media {
  format: BodyFormat;
  /** `application/vnd.pgrst.object+json`: exactly one row, as an object. */
  single: boolean;
  /** `application/vnd.pgrst.plan+json|text`: the execution plan instead of the rows (admins only). */
  plan: null | { as: 'json' | 'text'; options: string[] };
  /** The Content-Type of the answer. */
  contentType: string;
}

export const OBJECT = 'application/vnd.pgrst.object+json';
const PLAN_OPTIONS = new Set(['analyze', 'verbose', 'settings', 'buffers', 'wal']);

const JSON_MEDIA: Media = { format: 'json', single: false, plan: null, contentType: 'application/json; charset=utf-8' };

function one(type: string, params: Map<string, string>): Media | null {
  switch (type) {
    case '*/*':
    case 'application/*':
    case 'application/json':
      return JSON_MEDIA;
    case OBJECT:
      return params.get('nulls') === 'stripped'
        ? { format: 'stripped', single: true, plan: null, contentType: `${OBJECT}; nulls=stripped; charset=utf-8` }
        : { format: 'json', single: true, plan: null, contentType: `${OBJECT}; charset=utf-8` };
    case 'application/vnd.pgrst.array+json':
      return params.get('nulls') === 'stripped'
        ? {
            format: 'stripped',
            single: false,
            plan: null,
            contentType: 'application/vnd.pgrst.array+json; nulls=stripped; charset=utf-8',
          }
        : JSON_MEDIA;
    case 'text/csv':
      return { format: 'csv', single: false, plan: null, contentType: 'text/csv; charset=utf-8' };
    case 'application/geo+json':
      return { format: 'geojson', single: false, plan: null, contentType: 'application/geo+json; charset=utf-8' };
    case 'application/vnd.pgrst.plan':
    case 'application/vnd.pgrst.plan+text':
    case 'application/vnd.pgrst.plan+json': {
      const as = type.endsWith('+json') ? 'json' : 'text';
      const options = (params.get('options') ?? '').split('|').filter((o) => PLAN_OPTIONS.has(o));
      const target = (params.get('for') ?? 'application/json').replace(/"/g, '');
      return {
        format: 'json',
        single: target === OBJECT,
        plan: { as, options },
        contentType: `application/vnd.pgrst.plan+${as}; for="${target === OBJECT ? OBJECT : 'application/json'}"; charset=utf-8`,
      };
    }
    default:
      return null;
  }
}

/**
 * Reads `Accept` as PostgREST does: the first media type it can answer, in the client's order
 * (no header, or `*\/*`: JSON). None it can answer: 406 PGRST107 naming what it can.
 */
export function parseAccept(header: string | undefined): Media {
  if (!header?.trim()) return JSON_MEDIA;
  if (header.length > 1024) throw notAvailable(header);
  for (const part of header.split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/)) {
    const [type, ...rest] = part.split(';');
    const params = new Map<string, string>();
    for (const p of rest) {
      const eq = p.indexOf('=');
      if (eq > 0) params.set(p.slice(0, eq).trim().toLowerCase(), p.slice(eq + 1).trim());
    }
    const media = one(type!.trim().toLowerCase(), params);
    if (media) return media;
  }
  throw notAvailable(header);
}

export function notAvailable(header: string): AppError {
  return new AppError('MEDIA_NOT_AVAILABLE', {
    message: `None of these media types are available: ${safe(header, 200)}.`,
    details:
      'application/json, application/vnd.pgrst.object+json, application/vnd.pgrst.array+json;nulls=stripped, text/csv, application/geo+json (with PostGIS), application/vnd.pgrst.plan (admins)',
    pgrstCode: 'PGRST107',
  });
}

/**
 * A `Content-Type: text/csv` request body (PostgREST's CSV bulk insert): a header line of column
 * names, then one row per line (RFC 4180 quoting); an unquoted `NULL` is null, every other cell
 * its text (the column type decides, as for query-string values). Bad CSV is a 400.
 */
export function parseCsvBody(text: string): Array<Record<string, string | null>> {
  try {
    return parse(text, {
      columns: true,
      skip_empty_lines: true,
      bom: true,
      record_delimiter: ['\r\n', '\n'],
      cast: (v, ctx) => (v === 'NULL' && !ctx.quoting ? null : v),
    });
  } catch (err) {
    throw new AppError('INVALID_INPUT', {
      message: `The CSV body could not be read: ${err instanceof Error ? safe(err.message, 200) : 'bad CSV'}.`,
      nextActions:
        'Send a header line of column names, then one line per row, each with as many cells as the header (quote cells holding , " or line breaks).',
    });
  }
}

/** CSV cells of json/jsonb columns are JSON text: read them as JSON values (a 400 names the column otherwise). */
export function csvJsonCells(table: TableMeta, rows: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  const json = table.columnList.filter((c) => c.kind === 'json').map((c) => c.name);
  if (!json.length) return rows;
  return rows.map((row) => {
    const out = { ...row };
    for (const name of json) {
      const v = out[name];
      if (typeof v !== 'string') continue;
      try {
        out[name] = JSON.parse(v);
      } catch {
        throw new AppError('INVALID_VALUE', { message: `The CSV cell of column "${name}" is not valid JSON.` });
      }
    }
    return out;
  });
}

/** The body of a read as text, built by Postgres from the projected rows `inner`, in the format asked for. */
export function bodySql(format: BodyFormat, inner: string, names: string[], p: Params): string {
  switch (format) {
    case 'csv': // PostgREST's CSV: a header line, then each row's record text without its parentheses
      return `${p.add(names.join(','))}::text || chr(10) || coalesce((select string_agg(substring(r::text, 2, length(r::text) - 2), chr(10)) from (${inner}) r), '')`;
    case 'stripped':
      return `coalesce((select json_agg(json_strip_nulls(to_json(r.*))) from (${inner}) r), '[]')::text`;
    case 'geojson': // only asked for where PostGIS is installed (records.ts checks)
      return `json_build_object('type', 'FeatureCollection', 'features', coalesce((select json_agg(st_asgeojson(r.*)::json) from (${inner}) r), '[]'::json))::text`;
    default:
      return `coalesce((select json_agg(r.*) from (${inner}) r), '[]')::text`;
  }
}
