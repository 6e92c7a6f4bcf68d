/** An event grew past the parser's limit: the upstream is broken or hostile. */
export class SseEventTooLargeError extends Error {
  constructor(limit: number) {
    super(`SSE event larger than ${limit} bytes`);
    this.name = 'SseEventTooLargeError';
  }
}

/**
 * Incremental Server-Sent Events parser (the subset OpenAI-compatible servers use): feed it
 * bytes as they arrive, get back the `data` payload of each complete event. Comments and
 * other fields (event, id, retry) are ignored; several data lines are joined with "\n".
 */
export class SseParser {
  private readonly decoder = new TextDecoder();
  private buffer = '';
  private data: string[] = [];

  /** @param maxEventBytes a single event larger than this is an error (a broken upstream). */
  constructor(private readonly maxEventBytes = 8 * 1024 * 1024) {}

  push(chunk: Uint8Array): string[] {
    this.buffer += this.decoder.decode(chunk, { stream: true });
    return this.drain(false);
  }

  /** Call at end of input: a last event without its blank line is still delivered. */
  end(): string[] {
    this.buffer += this.decoder.decode();
    const out = this.drain(true);
    if (this.data.length) out.push(this.data.join('\n'));
    this.data = [];
    return out;
  }

  private drain(final: boolean): string[] {
    const out: string[] = [];
    let start = 0;
    for (;;) {
      const lf = this.buffer.indexOf('\n', start);
      const cr = this.buffer.indexOf('\r', start);
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      if (end === -1) break;
      // A lone "\r" at the very end may be the first half of "\r\n": wait for more input.
      if (end === cr && cr === this.buffer.length - 1 && !final) break;
      const line = this.buffer.slice(start, end);
      start = end + (this.buffer[end] === '\r' && this.buffer[end + 1] === '\n' ? 2 : 1);
      this.line(line, out);
    }
    this.buffer = this.buffer.slice(start);
    if (final && this.buffer) {
      this.line(this.buffer, out);
      this.buffer = '';
    }
    const pending = this.buffer.length + this.data.reduce((n, d) => n + d.length, 0);
    if (pending > this.maxEventBytes) throw new SseEventTooLargeError(this.maxEventBytes);
    return out;
  }

  private line(line: string, out: string[]): void {
    if (line === '') {
      if (this.data.length) out.push(this.data.join('\n'));
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    if (field !== 'data') return;
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    this.data.push(value);
  }
}
