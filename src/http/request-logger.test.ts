import Fastify from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import { jsonLines } from '../../test/helpers/log.js';
import { requestLogger } from './request-logger.js';

/** A real pino logger (Fastify's) writing JSON lines into an array. */
function pinoInto(level: string) {
  const { stream, lines } = jsonLines();
  const log = Fastify({ logger: { level, stream } }).log;
  return { log, lines };
}

const make = (parent: ReturnType<typeof pinoInto>['log'], options = {}) =>
  requestLogger.call(null as never, parent, { reqId: 'r-1' }, options, null as never);

describe('requestLogger', () => {
  it('makes no child and writes nothing below the level', () => {
    const { log, lines } = pinoInto('warn');
    const child = vi.spyOn(log, 'child');
    const req = make(log);
    req.info({ a: 1 }, 'not written');
    req.debug('not written');
    expect(child).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
  });

  it('binds the request id to every line written, once', () => {
    const { log, lines } = pinoInto('info');
    const child = vi.spyOn(log, 'child');
    const req = make(log);
    req.info({ a: 1 }, 'first');
    req.error(new Error('boom'), 'second');
    req.warn('third');
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines.map((l) => [l.reqId, l.msg])).toEqual([
      ['r-1', 'first'],
      ['r-1', 'second'],
      ['r-1', 'third'],
    ]);
    expect(lines[0]).toMatchObject({ a: 1, level: 30 });
    expect(lines[1]).toMatchObject({ err: { message: 'boom' }, level: 50 });
    expect(req.level).toBe('info');
  });

  it('keeps the request id on its own children', () => {
    const { log, lines } = pinoInto('info');
    make(log).child({ part: 'upload' }).info('nested');
    expect(lines).toEqual([expect.objectContaining({ reqId: 'r-1', part: 'upload', msg: 'nested' })]);
  });

  it('hands out a real child when the route sets its own level', () => {
    const { log, lines } = pinoInto('warn');
    const req = make(log, { level: 'debug' });
    req.debug('route level');
    expect(lines).toEqual([expect.objectContaining({ reqId: 'r-1', msg: 'route level', level: 20 })]);
  });
});
