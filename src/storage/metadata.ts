import { statement, type Queryable } from '../db/types.js';

/** An object's metadata row, as the service uses it. */
export interface ObjectRow {
  bucket: string;
  key: string;
  size: number;
  mimeType: string;
  etag: string | null;
  uploadedBy: string | null;
  uploadedAt: Date;
}

/** What a write sends for an object's row (Postgres sets its time). */
export type NewObjectRow = Omit<ObjectRow, 'uploadedAt'>;

export interface BucketRow {
  name: string;
  isPublic: boolean;
}

export interface UploadRow {
  userId: string | null;
  contentType: string;
}

const OBJECT_COLUMNS = `bucket, key, size::float8 as size, mime_type as "mimeType", etag,
  uploaded_by::text as "uploadedBy", uploaded_at as "uploadedAt"`;

function toObject(r: ObjectRow): ObjectRow {
  return { ...r, size: Number(r.size), uploadedAt: new Date(r.uploadedAt) };
}

/**
 * Run first by the API's own object writes and bucket deletes: their statement announces
 * nothing on plinth_storage (migration 0090), since the StorageCache of the writing instance
 * applies it (object writes are bracketed by its beginWrite and endWrite).
 */
const QUIET = `select set_config('plinth.quiet_storage', 'on', true)`;

// The hot statements, prepared once per connection on the embedded server.
const GET_BUCKET = statement('select name, is_public as "isPublic" from storage.buckets where name = $1');
const GET_BUCKET_AND_OBJECT = statement(
  `select true as "isBucket", is_public as "isPublic", null::float8 as size, null::text as "mimeType", null::text as etag,
     null::text as "uploadedBy", null::timestamptz as "uploadedAt"
   from storage.buckets where name = $1
   union all
   select false, null, size::float8, mime_type, etag, uploaded_by::text, uploaded_at
   from storage.objects where bucket = $1 and key = $2`,
);
/**
 * The one write of object rows, for one row (UPSERT_OBJECT) or many (UPSERT_OBJECTS): they
 * differ only in where the rows come from and what they return. (The single row stays its own
 * statement: as a batch of one, through unnest, it cost Postgres 5–10% more CPU.)
 */
const upsertObjectsFrom = (rows: string, returning: string) =>
  statement(
    `with quiet as (${QUIET})
     insert into storage.objects as o (bucket, key, size, mime_type, etag, uploaded_by)
     ${rows}
     on conflict (bucket, key) do update set size = excluded.size, mime_type = excluded.mime_type,
       etag = excluded.etag, uploaded_at = now(),
       uploaded_by = coalesce(excluded.uploaded_by, o.uploaded_by)
     returning ${returning}`,
  );
const UPSERT_OBJECT = upsertObjectsFrom(
  'select $1::text, $2::text, $3::bigint, $4::text, $5::text, $6::uuid from quiet',
  OBJECT_COLUMNS,
);
/**
 * Many objects' rows in one statement (ObjectRows): one bind, one execute and one commit for
 * all of them. Returns only what Postgres decides (the uploader kept by an admin's replace,
 * the time); the rest is what was sent.
 */
const UPSERT_OBJECTS = upsertObjectsFrom(
  `select r.bucket, r.key, r.size, r.mime_type, r.etag, r.uploaded_by
   from quiet, unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::uuid[])
     as r(bucket, key, size, mime_type, etag, uploaded_by)`,
  'o.bucket, o.key, o.uploaded_by::text as "uploadedBy", o.uploaded_at as "uploadedAt"',
);
const DELETE_OBJECT = statement(
  `with quiet as (${QUIET}) delete from storage.objects using quiet where bucket = $1 and key = $2`,
);

/** The SQL of storage metadata; every value a bind parameter. */
export const sql = {
  async listBuckets(db: Queryable): Promise<string[]> {
    const { rows } = await db.query<{ name: string }>('select name from storage.buckets order by name');
    return rows.map((r) => r.name);
  },

  async getBucket(db: Queryable, name: string): Promise<BucketRow | null> {
    const { rows } = await db.query<BucketRow>(GET_BUCKET, [name]);
    return rows[0] ?? null;
  },

  /** False when the bucket exists already. */
  async insertBucket(db: Queryable, name: string, isPublic: boolean): Promise<boolean> {
    const r = await db.query(
      'insert into storage.buckets (name, is_public) values ($1, $2) on conflict (name) do nothing',
      [name, isPublic],
    );
    return r.rowCount === 1;
  },

  async setBucketPublic(db: Queryable, name: string, isPublic: boolean): Promise<boolean> {
    const r = await db.query('update storage.buckets set is_public = $2, updated_at = now() where name = $1', [
      name,
      isPublic,
    ]);
    return r.rowCount === 1;
  },

  async deleteBucket(db: Queryable, name: string): Promise<boolean> {
    // Quiet: its objects go by cascade, a notification each otherwise; the cache of the
    // deleting instance forgets them all at once (StorageCache.bucketDeleted).
    const r = await db.query(`with quiet as (${QUIET}) delete from storage.buckets using quiet where name = $1`, [
      name,
    ]);
    return r.rowCount === 1;
  },

  /**
   * The bucket and, when it exists, the object: one round trip for the hot paths. (A union of
   * two primary-key lookups plans much faster than the equivalent join on PGlite.)
   */
  async getBucketAndObject(
    db: Queryable,
    bucket: string,
    key: string,
  ): Promise<{ bucket: BucketRow; object: ObjectRow | null } | null> {
    const { rows } = await db.query<ObjectRow & { isBucket: boolean; isPublic: boolean | null }>(
      GET_BUCKET_AND_OBJECT,
      [bucket, key],
    );
    const b = rows.find((r) => r.isBucket);
    if (!b) return null;
    const o = rows.find((r) => !r.isBucket);
    return {
      bucket: { name: bucket, isPublic: b.isPublic === true },
      object: o
        ? toObject({
            bucket,
            key,
            size: o.size,
            mimeType: o.mimeType,
            etag: o.etag,
            uploadedBy: o.uploadedBy,
            uploadedAt: o.uploadedAt,
          })
        : null,
    };
  },

  async getObject(db: Queryable, bucket: string, key: string): Promise<ObjectRow | null> {
    const { rows } = await db.query<ObjectRow>(
      `select ${OBJECT_COLUMNS} from storage.objects where bucket = $1 and key = $2`,
      [bucket, key],
    );
    return rows[0] ? toObject(rows[0]) : null;
  },

  /**
   * Objects of a bucket by key, filtered by key prefix and a case-insensitive substring, and
   * to one uploader's when `uploadedBy` is set.
   */
  async listObjects(
    db: Queryable,
    bucket: string,
    q: { prefix?: string; search?: string; limit: number; offset: number; uploadedBy?: string },
  ): Promise<{ rows: ObjectRow[]; total: number }> {
    const where = `bucket = $1 and ($2::text is null or starts_with(key, $2))
      and ($3::text is null or strpos(lower(key), lower($3)) > 0)
      and ($4::uuid is null or uploaded_by = $4)`;
    const params = [bucket, q.prefix || null, q.search || null, q.uploadedBy ?? null];
    const { rows } = await db.query<ObjectRow>(
      `select ${OBJECT_COLUMNS} from storage.objects where ${where} order by key limit $5 offset $6`,
      [...params, q.limit, q.offset],
    );
    const count = await db.query<{ n: number }>(
      `select count(*)::float8 as n from storage.objects where ${where}`,
      params,
    );
    return { rows: rows.map(toObject), total: Number(count.rows[0]?.n ?? 0) };
  },

  /**
   * Creates or replaces the object's row. An admin replacing an object keeps its uploader
   * (so the owner keeps access); a user replacing becomes the uploader.
   */
  async upsertObject(db: Queryable, o: NewObjectRow): Promise<ObjectRow> {
    const { rows } = await db.query<ObjectRow>(UPSERT_OBJECT, [
      o.bucket,
      o.key,
      o.size,
      o.mimeType,
      o.etag,
      o.uploadedBy,
    ]);
    return toObject(rows[0]!);
  },

  /**
   * upsertObject for several objects of distinct keys in one statement; the rows in the order
   * given. The statement is one: it fails or is applied as a whole.
   */
  async upsertObjects(db: Queryable, objects: readonly NewObjectRow[]): Promise<ObjectRow[]> {
    const { rows } = await db.query<Pick<ObjectRow, 'bucket' | 'key' | 'uploadedBy' | 'uploadedAt'>>(UPSERT_OBJECTS, [
      objects.map((o) => o.bucket),
      objects.map((o) => o.key),
      objects.map((o) => o.size),
      objects.map((o) => o.mimeType),
      objects.map((o) => o.etag),
      objects.map((o) => o.uploadedBy),
    ]);
    const written = new Map(rows.map((r) => [`${r.bucket}/${r.key}`, r]));
    return objects.map((o) => {
      const r = written.get(`${o.bucket}/${o.key}`);
      if (!r) throw new Error(`The row of ${o.bucket}/${o.key} was not returned`);
      return { ...o, uploadedBy: r.uploadedBy, uploadedAt: new Date(r.uploadedAt) };
    });
  },

  async deleteObject(db: Queryable, bucket: string, key: string): Promise<boolean> {
    const r = await db.query(DELETE_OBJECT, [bucket, key]);
    return r.rowCount === 1;
  },

  async upsertUpload(
    db: Queryable,
    u: { bucket: string; key: string; userId: string | null; contentType: string; expiresAt: Date },
  ): Promise<void> {
    await db.query(
      `insert into storage.uploads (bucket, key, user_id, content_type, expires_at) values ($1, $2, $3::uuid, $4, $5)
       on conflict (bucket, key) do update set user_id = excluded.user_id, content_type = excluded.content_type,
         expires_at = excluded.expires_at, created_at = now()`,
      [u.bucket, u.key, u.userId, u.contentType, u.expiresAt.toISOString()],
    );
  },

  async getUpload(db: Queryable, bucket: string, key: string): Promise<UploadRow | null> {
    const { rows } = await db.query<UploadRow>(
      'select user_id::text as "userId", content_type as "contentType" from storage.uploads where bucket = $1 and key = $2',
      [bucket, key],
    );
    return rows[0] ?? null;
  },

  /**
   * Removes up to `limit` announced uploads that were never confirmed a day after they
   * expired; returns those whose key holds no recorded object (their bytes can go).
   */
  async takeAbandonedUploads(db: Queryable, limit: number): Promise<Array<{ bucket: string; key: string }>> {
    const { rows } = await db.query<{ bucket: string; key: string; recorded: boolean }>(
      `delete from storage.uploads u
       where (u.bucket, u.key) in (
         select bucket, key from storage.uploads where expires_at < now() - interval '1 day' limit $1)
       returning u.bucket, u.key,
         exists (select 1 from storage.objects o where o.bucket = u.bucket and o.key = u.key) as recorded`,
      [limit],
    );
    return rows.filter((r) => !r.recorded).map(({ bucket, key }) => ({ bucket, key }));
  },

  /** Removes the pending upload and returns it; null when there was none (or another call took it). */
  async takeUpload(db: Queryable, bucket: string, key: string): Promise<UploadRow | null> {
    const { rows } = await db.query<UploadRow>(
      'delete from storage.uploads where bucket = $1 and key = $2 returning user_id::text as "userId", content_type as "contentType"',
      [bucket, key],
    );
    return rows[0] ?? null;
  },
};
