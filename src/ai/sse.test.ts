import { describe, expect, it } from 'vitest';
import { SseParser } from './sse.js';

const enc = (s: string) => new TextEncoder().encode(s);

describe('SseParser', () => {
  it('yields the data of each event, split at any byte boundary', () => {
    const text = 'data: {"a":1}\n\ndata: {"b":"é"}\n\n: keep-alive\n\ndata: [DONE]\n\n';
    const bytes = enc(text);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const p = new SseParser();
      const out = [...p.push(bytes.slice(0, cut)), ...p.push(bytes.slice(cut)), ...p.end()];
      expect(out).toEqual(['{"a":1}', '{"b":"é"}', '[DONE]']);
    }
  });

  it('accepts CRLF and CR line endings, no space after the colon, and joins data lines', () => {
    const p = new SseParser();
    expect(p.push(enc('data:x\r\n\r\ndata: y\rdata: z\r\r'))).toEqual(['x']);
    expect(p.end()).toEqual(['y\nz']);
  });

  it('ignores other fields and delivers a last event without its blank line at the end', () => {
    const p = new SseParser();
    expect(p.push(enc('event: message\nid: 3\nretry: 10\ndata: one\n\ndata: two'))).toEqual(['one']);
    expect(p.end()).toEqual(['two']);
  });

  it('refuses an event that grows past the limit', () => {
    const p = new SseParser(16);
    expect(() => p.push(enc(`data: ${'x'.repeat(32)}`))).toThrow(/larger than/);
  });
});
