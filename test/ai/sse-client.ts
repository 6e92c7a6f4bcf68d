// Reads Plinth's Server-Sent Events the way a client would, frame by frame as they arrive.
export class FrameReader {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private buffer = '';
  /** Every frame's data so far, in order. */
  readonly frames: string[] = [];

  constructor(res: Response) {
    this.reader = res.body!.getReader();
  }

  /** The next frame's data, or null at the end of the stream. */
  async next(): Promise<string | null> {
    for (;;) {
      const end = this.buffer.indexOf('\n\n');
      if (end !== -1) {
        const frame = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        if (!frame.startsWith('data: ')) throw new Error(`not an SSE data frame: ${frame}`);
        const data = frame.slice('data: '.length);
        this.frames.push(data);
        return data;
      }
      const { value, done } = await this.reader.read();
      if (done) {
        if (this.buffer.trim()) throw new Error(`stream ended inside a frame: ${this.buffer}`);
        return null;
      }
      this.buffer += this.decoder.decode(value, { stream: true });
    }
  }

  /** Reads to the end; returns all frames. */
  async all(): Promise<string[]> {
    while ((await this.next()) !== null);
    return this.frames;
  }

  cancel(): Promise<void> {
    return this.reader.cancel();
  }
}

/** The text the chunks of a chat stream add up to. */
export function streamedText(frames: string[]): string {
  return frames
    .filter((f) => f !== '[DONE]')
    .map((f) => JSON.parse(f))
    .flatMap((c) => (c.choices ?? []).map((ch: { delta?: { content?: string } }) => ch.delta?.content ?? ''))
    .join('');
}
