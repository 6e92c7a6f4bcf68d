// Relaying a streamed chat answer: the provider's events passed on as Server-Sent Events,
// checked as they pass, and the call metered once it ends however it ends.
import { AppError } from '../errors/index.js';
import { redact, redactError } from './redact.js';
import { estimateUsage, readChunk, type Usage } from './shape.js';
import { ClientGoneError } from './upstream.js';
import { CLIENT_CLOSED, type CallContext, type MeteredCall, type UsageMeter } from './usage.js';

const sseData = (data: string) => `data: ${data}\n\n`;

interface RelayState {
  usage: Usage | null;
  chars: number;
  finished: boolean;
  done: boolean;
}

/** One event's facts into the state; the event as SSE text, or '' when it is not passed on. */
function readEvent(data: string, st: RelayState, apiKey: string | null, injectUsage: boolean): string {
  if (data === '[DONE]') {
    st.done = true;
    return '';
  }
  let facts: ReturnType<typeof readChunk>;
  try {
    facts = readChunk(JSON.parse(data));
  } catch (err) {
    // Not JSON.parse's own error: it quotes the chunk, and a quote cut short could hold part of the key.
    throw err instanceof AppError
      ? err
      : new AppError('AI_UPSTREAM_ERROR', {
          message: 'The AI provider sent a malformed stream chunk.',
          cause: new Error(`AI upstream stream chunk is not JSON: ${redact(data, apiKey, 200)}`),
        });
  }
  if (facts.error !== null) {
    throw new AppError('AI_UPSTREAM_ERROR', {
      message: 'The AI provider reported an error in the middle of the answer.',
      cause: new Error(`AI upstream error event: ${redact(facts.error, apiKey)}`),
    });
  }
  st.chars += facts.chars;
  st.finished ||= facts.finished;
  if (facts.usage) st.usage = facts.usage;
  return facts.usageOnly && injectUsage ? '' : sseData(data);
}

/** The provider's events as SSE text, ending with `[DONE]` or an error event; metered in every case. */
export async function* relayStream(
  events: AsyncIterable<string[]>,
  s: { ctx: CallContext; call: MeteredCall; injectUsage: boolean; apiKey: string | null; meter: UsageMeter },
): AsyncGenerator<string> {
  const st: RelayState = { usage: null, chars: 0, finished: false, done: false };
  let status = 200;
  let error: string | null = null;
  try {
    // Events that arrived together are written together: one write, not one per event.
    for await (const batch of events) {
      let out = '';
      try {
        for (const data of batch) {
          out += readEvent(data, st, s.apiKey, s.injectUsage);
          if (st.done) break;
        }
      } finally {
        // The good events before a bad one still reach the client, then the error event.
        if (out) yield out;
      }
      if (st.done) break;
    }
    if (!st.done && !st.finished) {
      throw new AppError('AI_UPSTREAM_ERROR', {
        message: 'The AI provider ended the stream before the answer was complete.',
      });
    }
    yield sseData('[DONE]');
  } catch (err) {
    if (err instanceof ClientGoneError || s.ctx.signal.aborted) {
      status = CLIENT_CLOSED;
      return;
    }
    const e = redactError(err instanceof AppError ? err : new AppError('AI_UPSTREAM_ERROR', { cause: err }), s.apiKey);
    status = e.status;
    error = e.code;
    if (e.status >= 500) s.ctx.logError(e.cause ?? e, `AI stream failed: ${e.message}`);
    // The status line is long gone: the error travels as an event, as OpenAI sends them.
    yield sseData(JSON.stringify({ error: { message: e.message, type: 'upstream_error', code: e.code } }));
  } finally {
    if (s.ctx.signal.aborted && status === 200) status = CLIENT_CLOSED;
    const estimated = st.usage === null;
    s.meter.record(s.call, {
      usage: st.usage ?? estimateUsage(s.call.promptChars!, st.chars),
      estimated,
      status,
      error,
    });
  }
}
