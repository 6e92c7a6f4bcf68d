// The one set of type parsers for SQL an admin or agent writes (admin SQL, MCP run-raw-sql,
// /advance/rawsql, SQL as a user): date and time values come back as Postgres's own text.
// Parsed into a JavaScript Date they shift with the server process's time zone (a `date` is
// read as local midnight: under TZ=Europe/Berlin "2026-11-01" became "2026-10-31T23:00:00.000Z"),
// and the records API answers them as text already. The same set on every pool (node-pg, per
// query) and on PGlite (its `parsers` option), so both engines answer alike.
import pg from 'pg';

/** date, time, timestamp, timestamptz, timetz and their arrays: kept as Postgres's text. */
export const TEMPORAL_TEXT_OIDS: readonly number[] = [
  1082, // date
  1083, // time
  1114, // timestamp
  1184, // timestamptz
  1266, // timetz
  1182, // date[]
  1183, // time[]
  1115, // timestamp[]
  1185, // timestamptz[]
  1270, // timetz[]
];

const ARRAY_OF: Record<number, number> = { 1182: 1082, 1183: 1083, 1115: 1114, 1185: 1184, 1270: 1266 };
const TEMPORAL = new Set(TEMPORAL_TEXT_OIDS);
const asText = (value: string) => value;
/** An array of temporal values: a list of their texts (the element parser of text[] keeps them as they are). */
const textArray = pg.types.getTypeParser(1009 as never) as (value: string) => unknown;

/** node-pg's `types` for one query: temporal types as text, every other type as the pool parses it. */
export const pgTemporalText = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (TEMPORAL.has(oid)) return ARRAY_OF[oid] ? textArray : asText;
    return pg.types.getTypeParser(oid as never, format as never);
  },
} as pg.CustomTypesConfig;

/** PGlite's `parsers` for one query: the same temporal types as text. */
export const pgliteTemporalText: Record<number, (value: string) => unknown> = Object.fromEntries(
  TEMPORAL_TEXT_OIDS.map((oid) => [oid, ARRAY_OF[oid] ? textArray : asText]),
);
