import { type ChildProcess, fork } from 'node:child_process';
import { AppError } from '../errors/index.js';
import { codePath, FROM_SOURCE } from '../lib/code-dir.js';
import type { RenderAnswer, RenderRequest } from './image-render.js';

// The render process's script: the .ts under tsx (tests), or in a build its own bundle at the
// build's top level (scripts/build.mjs).
const SCRIPT = FROM_SOURCE ? codePath('storage', 'image-render.ts') : codePath('image-render.js');
const EXEC_ARGV = FROM_SOURCE ? ['--import', 'tsx'] : [];

export interface PoolOptions {
  /** Renders at once, each in its own process (IMAGE_CONCURRENT_RENDERS). */
  renders: number;
  /** Renders waiting for a turn at most; more are 503 IMAGE_BUSY (IMAGE_RENDER_QUEUE). */
  queue: number;
  /** A render (or a wait for a turn) longer than this is ended (IMAGE_RENDER_SECONDS). */
  timeoutMs: number;
  /** A process idle this long exits, giving its memory back. */
  idleMs?: number;
  /** A process whose memory is past this after a render is replaced. */
  maxRssBytes?: number;
}

interface Slot {
  /** The process, once it said it is ready (sharp loaded): a render's time starts then. */
  child: Promise<ChildProcess> | null;
  busy: boolean;
  idle: NodeJS.Timeout | null;
}

interface Waiter {
  resolve: (slot: Slot) => void;
  reject: (err: AppError) => void;
  timer: NodeJS.Timeout;
}

/** What the pool did since start (metrics and tests). */
export interface PoolStats {
  renders: number;
  timeouts: number;
  busy: number;
  crashes: number;
  /** Render processes started. */
  started: number;
}

const busy = (why: string) =>
  new AppError('IMAGE_BUSY', {
    message: `The server is rendering as many images as it may (${why}).`,
    headers: { 'retry-after': '2' },
  });

/**
 * Render processes, at most `renders` at once, each started on demand and ended when idle. A
 * render is a message to a free process; one that does not answer in time is killed (SIGKILL:
 * the encoder stops mid-work and its memory goes back with the process) and answered 422
 * IMAGE_TOO_COSTLY. Past the bounded queue, or after waiting as long as a render may take, 503.
 */
export class RenderPool {
  private readonly slots: Slot[];
  private readonly waiting: Waiter[] = [];
  private next = 1;
  private closed = false;
  readonly stats: PoolStats = { renders: 0, timeouts: 0, busy: 0, crashes: 0, started: 0 };
  /** The pid of the last process ended for running out of time (tests). */
  lastKilled: number | null = null;

  constructor(private readonly opts: PoolOptions) {
    this.slots = Array.from({ length: Math.max(1, opts.renders) }, () => ({ child: null, busy: false, idle: null }));
  }

  /** Renders in a process of the pool; the answer's bytes, or an AppError. */
  async run(req: Omit<RenderRequest, 'id'>): Promise<Buffer> {
    const slot = await this.acquire();
    try {
      return await this.send(slot, { ...req, id: this.next++ });
    } finally {
      this.release(slot);
    }
  }

  private acquire(): Promise<Slot> {
    if (this.closed) return Promise.reject(busy('the server is shutting down'));
    const free = this.waiting.length ? undefined : this.slots.find((s) => !s.busy);
    if (free) {
      free.busy = true;
      if (free.idle) clearTimeout(free.idle);
      return Promise.resolve(free);
    }
    if (this.waiting.length >= this.opts.queue) {
      this.stats.busy++;
      return Promise.reject(busy(`${this.slots.length} at once, ${this.opts.queue} waiting`));
    }
    return new Promise<Slot>((resolve, reject) => {
      const w: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(w), 1);
          this.stats.busy++;
          reject(busy(`no turn within ${this.opts.timeoutMs / 1000} s`));
        }, this.opts.timeoutMs),
      };
      this.waiting.push(w);
    });
  }

  private release(slot: Slot): void {
    const w = this.waiting.shift();
    if (w) {
      clearTimeout(w.timer);
      w.resolve(slot);
      return;
    }
    slot.busy = false;
    if (slot.child) {
      const child = slot.child;
      slot.idle = setTimeout(() => {
        if (slot.child === child && !slot.busy) this.end(slot);
      }, this.opts.idleMs ?? 30_000);
      slot.idle.unref();
    }
  }

  /** A new render process, once it is ready (or an error when it could not start). */
  private spawn(): Promise<ChildProcess> {
    const child = fork(SCRIPT, [], {
      execArgv: EXEC_ARGV,
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    this.stats.started++;
    return new Promise<ChildProcess>((resolve, reject) => {
      const failed = () => {
        child.kill('SIGKILL');
        reject(new AppError('SERVICE_UNAVAILABLE', { message: 'The image render process could not start.' }));
      };
      child.once('error', failed);
      child.once('exit', failed);
      child.once('message', () => {
        child.off('error', failed);
        child.off('exit', failed);
        child.on('error', () => {}); // a failure later shows as its exit
        resolve(child);
      });
    });
  }

  private end(slot: Slot, signal: NodeJS.Signals = 'SIGTERM'): void {
    const child = slot.child;
    slot.child = null;
    void child?.then(
      (c) => {
        c.kill(signal);
        if (signal === 'SIGKILL') this.lastKilled = c.pid ?? null;
      },
      () => {},
    );
  }

  private async send(slot: Slot, req: RenderRequest): Promise<Buffer> {
    slot.child ??= this.spawn();
    const starting = slot.child;
    const child = await starting.catch((err: unknown) => {
      if (slot.child === starting) slot.child = null;
      throw err;
    });
    return new Promise<Buffer>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
      };
      const onMessage = (a: RenderAnswer) => {
        if (a.id !== req.id) return;
        done();
        this.stats.renders++;
        // A process that grew past the bound is replaced: the next render starts small.
        if (a.rss > (this.opts.maxRssBytes ?? 512 * 1024 * 1024)) this.end(slot);
        if (a.ok) resolve(Buffer.from(a.bytes.buffer, a.bytes.byteOffset, a.bytes.byteLength));
        else
          reject(
            new AppError(a.code, {
              message:
                a.code === 'NOT_AN_IMAGE'
                  ? `The object is not an image that can be transformed (${a.message}).`
                  : a.message,
            }),
          );
      };
      const onExit = () => {
        done();
        slot.child = null;
        this.stats.crashes++;
        reject(
          new AppError('IMAGE_TOO_COSTLY', {
            message: 'The render process ended before the rendition was done (it ran out of memory or was stopped).',
          }),
        );
      };
      const timer = setTimeout(() => {
        done();
        this.end(slot, 'SIGKILL');
        this.stats.timeouts++;
        reject(
          new AppError('IMAGE_TOO_COSTLY', {
            message: `The rendition took longer than ${this.opts.timeoutMs / 1000} s (IMAGE_RENDER_SECONDS) and was stopped.`,
          }),
        );
      }, this.opts.timeoutMs);
      child.on('message', onMessage);
      child.on('exit', onExit);
      child.send(req);
    });
  }

  /** Ends every render process; renders waiting are refused. */
  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) {
      clearTimeout(w.timer);
      w.reject(busy('the server is shutting down'));
    }
    for (const s of this.slots) {
      if (s.idle) clearTimeout(s.idle);
      this.end(s, 'SIGKILL');
    }
  }
}
