import type { Db } from '../db/types.js';
import type { BucketRow, ObjectRow } from './metadata.js';

export const STORAGE_CHANNEL = 'plinth_storage';

/** Object rows kept (found or known missing); the oldest used goes first. */
const MAX_OBJECTS = 10_000;
/** Buckets kept (found or known missing: any name can be asked for); the oldest goes first. */
const MAX_BUCKETS = 1_000;
/** Bodies of objects up to this size are kept in memory, within MAX_BODY_BYTES in all. */
export const MAX_CACHED_BODY = 64 * 1024;
const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Notifications remembered for the lookups in flight; past this many they are forgotten. */
const MAX_NOTES = 10_000;

/** What the storage triggers announce (migration 0090): a row's new version, null once deleted. */
type Note = { t: 'o'; b: string; k: string; v: string | null } | { t: 'b'; b: string; v: string | null } | { t: 'all' };

/** The version a row's notification names: every field a reader is answered from. */
export function objectVersion(r: ObjectRow): string {
  return `${r.etag ?? ''}|${r.size}|${r.mimeType}|${r.uploadedBy ?? ''}|${r.uploadedAt.getTime()}`;
}

const bucketVersion = (b: BucketRow | null) => (b ? (b.isPublic ? 'public' : 'private') : null);
const objectVersionOrNull = (r: ObjectRow | null) => (r ? objectVersion(r) : null);
const objectId = (bucket: string, key: string) => `${bucket}/${key}`;

/** An answer from the database, stamped with `begin()` before it was asked. */
export type Ticket = number;

/**
 * Storage metadata (buckets, object rows, and the bodies of small local objects) kept in
 * memory, so that a hot read asks neither Postgres nor the disk. Exact because every change
 * is known: this instance's own object writes are applied here as they end (beginWrite,
 * endWrite), every other change is announced by the storage triggers, which NOTIFY the row's
 * new version on plinth_storage (migration 0090), and while the LISTEN connection is down
 * nothing is kept or served from here.
 *
 * Each change leaves a note on its row. An answer read from the database is kept only if
 * no note arrived since the read began (or the newest names the version read) and no write
 * of this instance is in flight on the row; a write's own result only if no other write or
 * note touched the row meanwhile. Whatever is not kept is read again next time.
 *
 * Used only where this process owns the database (the embedded server): with several
 * instances on one server Postgres, another instance's write would be seen only when its
 * notification arrives, and read-your-writes across instances matters more than the speed.
 */
export class StorageCache {
  private live = false;
  private seq = 0;
  /** Answers stamped before this are not kept (their notifications may be forgotten). */
  private floor = 0;
  private readonly notes = new Map<string, { seq: number; version: string | null | undefined }>();
  /** Writes of this instance in flight, per object. */
  private readonly writing = new Map<string, number>();
  private readonly buckets = new Map<string, BucketRow | null>();
  private readonly objects = new Map<string, ObjectRow | null>();
  private readonly bodies = new Map<string, { version: string; bytes: Buffer }>();
  private bodyBytes = 0;
  private unlisten: (() => Promise<void>) | null = null;

  /** Starts listening; until then (and whenever the connection is down) everything misses. */
  async start(db: Db): Promise<void> {
    this.unlisten = await db.listen(
      STORAGE_CHANNEL,
      (payload) => this.heard(payload),
      (listening) => this.reset(listening),
    );
    this.reset(true);
  }

  async stop(): Promise<void> {
    this.reset(false);
    await this.unlisten?.();
    this.unlisten = null;
  }

  /** Stamps a database read or write that is about to start. */
  begin(): Ticket {
    return this.seq;
  }

  /** The bucket: undefined when not known here, null when it does not exist. */
  bucket(name: string): BucketRow | null | undefined {
    return this.live ? this.buckets.get(name) : undefined;
  }

  /** The object's row: undefined when not known here, null when it does not exist. */
  object(bucket: string, key: string): ObjectRow | null | undefined {
    if (!this.live) return undefined;
    const id = objectId(bucket, key);
    const row = this.objects.get(id);
    if (row !== undefined) {
      // Most recently used last: the first entry is the one to evict.
      this.objects.delete(id);
      this.objects.set(id, row);
    }
    return row;
  }

  /** The bytes of this version of the object, when they are held here. */
  body(row: ObjectRow): Buffer | undefined {
    const held = this.live ? this.bodies.get(objectId(row.bucket, row.key)) : undefined;
    return held && held.version === objectVersion(row) ? held.bytes : undefined;
  }

  keepBucket(ticket: Ticket, name: string, row: BucketRow | null): void {
    if (!this.mayKeep(ticket, `b:${name}`, bucketVersion(row))) return;
    this.buckets.delete(name);
    this.buckets.set(name, row);
    if (this.buckets.size > MAX_BUCKETS) this.buckets.delete(this.buckets.keys().next().value!);
  }

  /** This instance deleted the bucket: its objects go (a bucket of that name may come back). */
  bucketDeleted(name: string): void {
    this.reset(this.live);
    this.buckets.set(name, null);
  }

  /** Keeps the object's row read from the database after `ticket`. */
  keepObject(ticket: Ticket, bucket: string, key: string, row: ObjectRow | null): void {
    const id = objectId(bucket, key);
    if (!this.writing.has(id) && this.mayKeep(ticket, id, objectVersionOrNull(row))) this.setObject(id, row);
  }

  /** Keeps the bytes read for `row` (read after `ticket`), when small enough. */
  keepBody(ticket: Ticket, row: ObjectRow, bytes: Buffer): void {
    const id = objectId(row.bucket, row.key);
    if (!this.writing.has(id) && this.mayKeep(ticket, id, objectVersion(row))) this.setBody(id, row, bytes);
  }

  /** This instance starts changing the object (its bytes, or its row): nothing read meanwhile is kept. */
  beginWrite(bucket: string, key: string): Ticket {
    const id = objectId(bucket, key);
    this.writing.set(id, (this.writing.get(id) ?? 0) + 1);
    this.note(id, undefined);
    this.drop(id);
    return this.seq;
  }

  /**
   * The write begun with `ticket` ended, leaving `row` (null: deleted; undefined: unknown,
   * it failed). Kept only when it was the one write on the row and nothing else touched it
   * meanwhile. (Bodies are kept only once read: memory goes to what is downloaded.)
   */
  endWrite(ticket: Ticket, bucket: string, key: string, row: ObjectRow | null | undefined): void {
    const id = objectId(bucket, key);
    const writers = this.writing.get(id) ?? 1;
    if (row !== undefined && writers === 1 && this.mayKeep(ticket, id, undefined)) this.setObject(id, row);
    if (writers > 1) this.writing.set(id, writers - 1);
    else this.writing.delete(id);
    // Reads that began before this write ended may have seen the row before it: not kept.
    this.note(id, undefined);
  }

  /** No note on the row since `ticket` but one naming `version` (undefined: none at all). */
  private mayKeep(ticket: Ticket, id: string, version: string | null | undefined): boolean {
    if (!this.live || ticket < this.floor) return false;
    const note = this.notes.get(id);
    return !note || note.seq <= ticket || (version !== undefined && note.version === version);
  }

  private setObject(id: string, row: ObjectRow | null): void {
    this.objects.delete(id);
    this.objects.set(id, row);
    if (!row || this.bodies.get(id)?.version !== objectVersion(row)) this.dropBody(id);
    if (this.objects.size > MAX_OBJECTS) this.drop(this.objects.keys().next().value!);
  }

  private setBody(id: string, row: ObjectRow, bytes: Buffer): void {
    if (bytes.length > MAX_CACHED_BODY) return;
    this.dropBody(id);
    this.bodies.set(id, { version: objectVersion(row), bytes });
    this.bodyBytes += bytes.length;
    for (const first of this.bodies.keys()) {
      if (this.bodyBytes <= MAX_BODY_BYTES) break;
      this.dropBody(first);
    }
  }

  private note(id: string, version: string | null | undefined): void {
    if (this.notes.size >= MAX_NOTES) {
      this.notes.clear();
      this.floor = this.seq + 1;
    }
    this.notes.set(id, { seq: ++this.seq, version });
  }

  private heard(payload: string): void {
    let note: Note;
    try {
      note = JSON.parse(payload) as Note;
    } catch {
      return this.reset(this.live);
    }
    if (note.t === 'o') {
      const id = objectId(note.b, note.k);
      this.note(id, note.v);
      const held = this.objects.get(id);
      if (held !== undefined && objectVersionOrNull(held) !== note.v) this.drop(id);
    } else if (note.t === 'b' && note.v !== null) {
      this.note(`b:${note.b}`, note.v);
      const held = this.buckets.get(note.b);
      if (held !== undefined && bucketVersion(held) !== note.v) this.buckets.delete(note.b);
    } else {
      // A bucket deleted (with its objects, a note each, which a rare reset makes simpler), or all.
      this.reset(this.live);
    }
  }

  /** Drops everything; answers already in flight are not kept. */
  private reset(live: boolean): void {
    this.live = live;
    this.floor = ++this.seq;
    this.notes.clear();
    this.buckets.clear();
    this.objects.clear();
    this.bodies.clear();
    this.bodyBytes = 0;
  }

  private drop(id: string): void {
    this.objects.delete(id);
    this.dropBody(id);
  }

  private dropBody(id: string): void {
    const held = this.bodies.get(id);
    if (!held) return;
    this.bodies.delete(id);
    this.bodyBytes -= held.bytes.length;
  }
}
