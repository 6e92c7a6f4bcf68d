import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { AppError } from '../../../errors/index.js';

export interface FilePart {
  filename: string;
  mimeType: string;
}

const LIMITS = { files: 1, fields: 20, fieldSize: 64 * 1024, parts: 40, headerPairs: 100 };

const bad = (message: string) => new AppError('INVALID_MULTIPART', { message });

/**
 * Streams a multipart/form-data request: text fields first, then the part named `file`
 * handed to `onFile` as a stream (never buffered). Fields after the file are not seen by
 * `onFile`; `undo` is called with its result if the form turns out broken after it.
 * Resolves with `onFile`'s result once the whole form was read.
 */
export function receiveFile<T>(
  req: IncomingMessage,
  onFile: (file: Readable, info: FilePart, fields: Readonly<Record<string, string>>) => Promise<T>,
  undo?: (value: T) => Promise<void>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: req.headers, limits: LIMITS });
    } catch {
      reject(bad('The multipart Content-Type has no boundary.'));
      return;
    }
    const fields: Record<string, string> = {};
    let file: Readable | null = null;
    let result: Promise<T> | null = null;
    let settled = false;

    const finish = async (err: unknown) => {
      if (settled) return;
      settled = true;
      req.unpipe(bb);
      if (err) {
        // Stop the file stream so a store in progress fails and cleans up, then wait for it.
        file?.destroy(err instanceof Error ? err : new Error(String(err)));
        const outcome = await result?.then(
          (v) => ({ ok: true as const, v }),
          () => ({ ok: false as const }),
        );
        if (outcome?.ok && undo) await undo(outcome.v).catch(() => {});
        reject(err);
        return;
      }
      try {
        resolve(await result!);
      } catch (e) {
        reject(e);
      }
    };

    bb.on('field', (name, value, info) => {
      if (settled) return;
      if (info.valueTruncated || info.nameTruncated)
        return void finish(bad(`The field "${name.slice(0, 64)}" is too long.`));
      if (file && name === 'path') return void finish(bad('Send the "path" field before the "file" field.'));
      fields[name] = value;
    });
    bb.on('file', (name, stream, info) => {
      if (name !== 'file' || file || settled) {
        stream.resume();
        return;
      }
      file = stream;
      // Errors reach onFile's consumer; this keeps a destroyed, unconsumed stream from crashing.
      stream.on('error', () => {});
      // The live object: fields sent after the file are added to it as the form is read.
      result = onFile(stream, { filename: info.filename ?? '', mimeType: info.mimeType }, fields);
      // A failed store (too large, bucket gone) ends the request at once.
      result.catch((err) => finish(err));
    });
    for (const ev of ['partsLimit', 'filesLimit', 'fieldsLimit'] as const) {
      bb.on(ev, () => void finish(bad('The form has too many parts: send one "file" and a few text fields.')));
    }
    bb.on('error', () => void finish(bad('The multipart body is malformed or incomplete.')));
    bb.on('close', () => {
      if (!result) return void finish(bad('The form has no file in a field named "file".'));
      void finish(null);
    });
    req.on('close', () => {
      if (!req.complete) void finish(bad('The upload ended before it was complete.'));
    });
    req.pipe(bb);
  });
}

// How much of a refused body is read and thrown away before giving up on the connection.
const DRAIN_BUDGET = 16 * 1024 * 1024;
const DRAIN_MS = 10_000;

/**
 * Reads and discards the rest of a request body before an early answer (413, 400) is sent:
 * Node stops reading a socket once its response is out, so a client still sending would
 * never see the answer. Resolves true when the body ended; false when it went past
 * DRAIN_BUDGET bytes or DRAIN_MS (the caller then closes the connection with the answer).
 */
export function drain(req: IncomingMessage): Promise<boolean> {
  req.unpipe();
  if (req.readableEnded) return Promise.resolve(true);
  // Already closed (the client went away): no 'close' event will come to end the wait.
  if (req.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    let drained = 0;
    const done = (complete: boolean) => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      if (!complete) req.pause();
      resolve(complete);
    };
    const onData = (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > DRAIN_BUDGET) done(false);
    };
    const onEnd = () => done(true);
    const onClose = () => done(req.readableEnded);
    const timer = setTimeout(() => done(false), DRAIN_MS);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onClose);
    req.resume();
  });
}
