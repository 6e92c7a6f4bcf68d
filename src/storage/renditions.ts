import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Renditions up to this size are also kept in memory (the hot ones of a page of thumbnails). */
const MAX_HELD = 512 * 1024;
const MEMORY_BYTES = 16 * 1024 * 1024;

/**
 * Transformed images, by a key that includes the object's version (so a changed object never
 * finds the renditions of its old bytes): on disk under `directory`, bounded to `maxBytes`
 * (the least recently used go first), the small ones also in memory.
 */
export class RenditionCache {
  /** name → size on disk, in order of last use (oldest first). */
  private readonly disk = new Map<string, number>();
  private diskBytes = 0;
  private readonly held = new Map<string, Buffer>();
  private heldBytes = 0;
  private ready: Promise<void> | null = null;

  constructor(
    private readonly directory: string,
    private readonly maxBytes: number,
  ) {}

  /** Indexes what a previous run left (oldest first), once. */
  private init(): Promise<void> {
    this.ready ??= (async () => {
      await mkdir(this.directory, { recursive: true });
      const found: { name: string; size: number; mtime: number }[] = [];
      for (const name of await readdir(this.directory)) {
        const file = path.join(this.directory, name);
        if (name.startsWith('.')) {
          await rm(file, { force: true }); // a write a crash interrupted
          continue;
        }
        const s = await stat(file).catch(() => null);
        if (s?.isFile()) found.push({ name, size: s.size, mtime: s.mtimeMs });
      }
      for (const f of found.sort((a, b) => a.mtime - b.mtime)) this.index(f.name, f.size);
      await this.evict();
    })();
    return this.ready;
  }

  private index(name: string, size: number): void {
    this.disk.set(name, size);
    this.diskBytes += size;
  }

  async get(name: string): Promise<Buffer | null> {
    const held = this.held.get(name);
    if (held) {
      this.held.delete(name);
      this.held.set(name, held);
      this.touch(name);
      return held;
    }
    await this.init();
    if (!this.disk.has(name)) return null;
    const bytes = await readFile(path.join(this.directory, name)).catch(() => null);
    if (!bytes) {
      this.forget(name);
      return null;
    }
    this.touch(name);
    this.hold(name, bytes);
    return bytes;
  }

  async put(name: string, bytes: Buffer): Promise<void> {
    this.hold(name, bytes);
    if (this.maxBytes === 0 || bytes.length > this.maxBytes) return;
    await this.init();
    // Written aside and renamed: a reader never sees half a file.
    const tmp = path.join(this.directory, `.${randomUUID()}`);
    try {
      await writeFile(tmp, bytes);
      await rename(tmp, path.join(this.directory, name));
    } catch {
      await rm(tmp, { force: true });
      return; // a full disk costs a re-render later, never the answer
    }
    this.forget(name);
    this.index(name, bytes.length);
    await this.evict();
  }

  private touch(name: string): void {
    const size = this.disk.get(name);
    if (size === undefined) return;
    this.disk.delete(name);
    this.disk.set(name, size);
  }

  private forget(name: string): void {
    const size = this.disk.get(name);
    if (size === undefined) return;
    this.disk.delete(name);
    this.diskBytes -= size;
  }

  private hold(name: string, bytes: Buffer): void {
    if (bytes.length > MAX_HELD || this.held.has(name)) return;
    this.held.set(name, bytes);
    this.heldBytes += bytes.length;
    for (const [old, b] of this.held) {
      if (this.heldBytes <= MEMORY_BYTES) break;
      this.held.delete(old);
      this.heldBytes -= b.length;
    }
  }

  private async evict(): Promise<void> {
    for (const [name] of this.disk) {
      if (this.diskBytes <= this.maxBytes) break;
      this.forget(name);
      const b = this.held.get(name);
      if (b) {
        this.held.delete(name);
        this.heldBytes -= b.length;
      }
      await rm(path.join(this.directory, name), { force: true });
    }
  }

  /** Bytes on disk now (tests). */
  get size(): number {
    return this.diskBytes;
  }
}
