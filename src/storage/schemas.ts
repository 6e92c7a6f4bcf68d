// The inputs storage operations share between their faces, declared once: the HTTP routes
// (/api/storage/buckets…) and the MCP tools (create-bucket, list-objects, …) take these
// (test/mcp/schemas.test.ts keeps the two faces equal).
import { Type } from 'typebox';
import { BUCKET_NAME_PATTERN } from './keys.js';

/** A bucket's name, in a path or a body. */
export const BucketName = Type.String({
  pattern: BUCKET_NAME_PATTERN,
  description: '1-63 letters, digits, "_" or "-"',
});
