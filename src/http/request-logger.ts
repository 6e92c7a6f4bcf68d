import type { FastifyBaseLogger, FastifyServerOptions, LogLevel } from 'fastify';

type Level = Exclude<LogLevel, 'silent'>;
type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];
/** The app's logger is pino, which can tell whether a level is enabled. */
type Parent = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

/**
 * A request's logger that makes its pino child (with the request id bound) only when a line
 * is written at an enabled level. Fastify asks for a child on every request and pino
 * serializes the bindings right away, yet most requests log nothing at the server's level.
 */
class RequestLogger {
  private childLogger: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: Parent,
    private readonly bindings: Bindings,
  ) {}

  private write(level: Level, args: unknown[]): void {
    if (!this.parent.isLevelEnabled(level)) return;
    this.childLogger ??= this.parent.child(this.bindings);
    (this.childLogger[level] as (...a: unknown[]) => void)(...args);
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  silent(): void {}

  get level(): string {
    return this.parent.level;
  }

  isLevelEnabled(level: string): boolean {
    return this.parent.isLevelEnabled(level);
  }

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.parent.child({ ...this.bindings, ...bindings }, options);
  }
}

/**
 * Fastify's `childLoggerFactory`: a lazy child, unless the route sets its own level or
 * serializers, or logging is off (Fastify's silent logger has no levels to ask).
 */
export const requestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) =>
  options.level || options.serializers || typeof (logger as Partial<Parent>).isLevelEnabled !== 'function'
    ? logger.child(bindings, options)
    : (new RequestLogger(logger as Parent, bindings) as unknown as FastifyBaseLogger);
