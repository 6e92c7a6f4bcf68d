// The shapes of OpenAI answers as Plinth returns them, built defensively from whatever the
// upstream sent: missing optional parts are filled in, a missing core part is a 502, and the
// upstream's extra fields (tool_calls, logprobs, system_fingerprint, ...) pass through.
import { randomBytes } from 'node:crypto';
import { AppError } from '../errors/index.js';
import type { Json } from './upstream.js';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  [extra: string]: unknown;
}

export interface ChatCompletion {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: { role: string; content: string | null; [k: string]: unknown };
    finish_reason: string | null;
    [k: string]: unknown;
  }>;
  usage: Usage;
  [extra: string]: unknown;
}

export interface ImagesAnswer {
  created: number;
  data: Array<{ b64_json?: string; url?: string; revised_prompt?: string; [k: string]: unknown }>;
  [extra: string]: unknown;
}

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
/**
 * More tokens than any model's context holds: such usage is a broken or hostile upstream and
 * counts as not reported (estimated). Two such counts still fit the int columns of ai.usage.
 */
const MAX_USAGE_TOKENS = 1_000_000_000;
const isTokens = (v: unknown): v is number => isCount(v) && v <= MAX_USAGE_TOKENS;
const nowSeconds = () => Math.floor(Date.now() / 1000);

function malformed(what: string): AppError {
  return new AppError('AI_UPSTREAM_ERROR', {
    message: 'The AI provider sent an answer Plinth does not understand.',
    cause: new Error(`malformed upstream answer: ${what}`),
  });
}

/** About 4 characters a token: used only when the upstream reports no usage. */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

/** The usage of a call the upstream reported none for, from the prompt's and the answer's text. */
export function estimateUsage(promptChars: number, answerChars: number): Usage {
  const p = estimateTokens(promptChars);
  const c = estimateTokens(answerChars);
  return { prompt_tokens: p, completion_tokens: c, total_tokens: p + c };
}

/** The characters of text in chat messages (string contents and text parts), for estimates. */
export function promptChars(messages: readonly unknown[]): number {
  let n = 0;
  for (const m of messages) {
    if (!isObject(m)) continue;
    const c = m.content;
    if (typeof c === 'string') n += c.length;
    else if (Array.isArray(c)) for (const p of c) if (isObject(p) && typeof p.text === 'string') n += p.text.length;
  }
  return n;
}

/** The upstream's usage when it is well-formed and believable, else null. */
export function readUsage(v: unknown): Usage | null {
  if (!isObject(v)) return null;
  const p = v.prompt_tokens ?? v.input_tokens;
  const c = v.completion_tokens ?? v.output_tokens;
  if (!isTokens(p) || !isTokens(c)) return null;
  const total = isTokens(v.total_tokens) ? v.total_tokens : p + c;
  return { ...v, prompt_tokens: p, completion_tokens: c, total_tokens: total };
}

/**
 * A chat completion in the spec's shape. `estimated` says usage was made up from
 * `promptChars` and the answer's length because the upstream sent none.
 */
export function shapeChat(
  raw: unknown,
  model: string,
  promptCharCount: number,
): { completion: ChatCompletion; estimated: boolean } {
  if (!isObject(raw)) throw malformed('not an object');
  if (!Array.isArray(raw.choices)) throw malformed('no choices');
  let answerChars = 0;
  const choices = raw.choices.map((c: unknown, i: number) => {
    if (!isObject(c) || !isObject(c.message)) throw malformed('choice without message');
    const m = c.message;
    const content = typeof m.content === 'string' ? m.content : null;
    answerChars += content?.length ?? 0;
    return {
      ...c,
      index: isCount(c.index) ? c.index : i,
      message: { ...m, role: typeof m.role === 'string' ? m.role : 'assistant', content },
      finish_reason: typeof c.finish_reason === 'string' ? c.finish_reason : null,
    };
  });
  const given = readUsage(raw.usage);
  const usage: Usage = given ?? estimateUsage(promptCharCount, answerChars);
  const completion: ChatCompletion = {
    ...raw,
    id: typeof raw.id === 'string' && raw.id ? raw.id : `chatcmpl-${randomBytes(12).toString('hex')}`,
    object: typeof raw.object === 'string' ? raw.object : 'chat.completion',
    created: isCount(raw.created) ? raw.created : nowSeconds(),
    model: typeof raw.model === 'string' && raw.model ? raw.model : model,
    choices,
    usage,
  };
  return { completion, estimated: !given };
}

/** An image generation answer in the spec's shape ({created, data: [{b64_json}]}). */
export function shapeImages(raw: unknown): { answer: ImagesAnswer; usage: Usage | null } {
  if (!isObject(raw) || !Array.isArray(raw.data)) throw malformed('no data array');
  const data = raw.data.map((d: unknown) => {
    if (!isObject(d)) throw malformed('image item not an object');
    if (typeof d.b64_json !== 'string' && typeof d.url !== 'string')
      throw malformed('image item without b64_json or url');
    return d;
  });
  return {
    answer: { ...raw, created: isCount(raw.created) ? raw.created : nowSeconds(), data },
    usage: readUsage(raw.usage),
  };
}

export interface ModelList {
  object: 'list';
  data: Array<{ id: string; object: string; created: number; owned_by: string; [k: string]: unknown }>;
}

/** The upstream's model list in OpenAI's shape (Ollama and llama.cpp omit some fields). */
export function shapeModels(raw: unknown): ModelList {
  const items =
    isObject(raw) && Array.isArray(raw.data)
      ? raw.data
      : isObject(raw) && Array.isArray(raw.models)
        ? raw.models
        : null;
  if (!items) throw malformed('no model list');
  const data = items.flatMap((m: unknown) => {
    if (!isObject(m)) return [];
    const id =
      typeof m.id === 'string'
        ? m.id
        : typeof m.name === 'string'
          ? m.name
          : typeof m.model === 'string'
            ? m.model
            : null;
    if (!id) return [];
    return [
      {
        ...m,
        id,
        object: 'model',
        created: isCount(m.created) ? m.created : 0,
        owned_by: typeof m.owned_by === 'string' ? m.owned_by : 'upstream',
      },
    ];
  });
  return { object: 'list', data };
}

/** What a stream chunk tells the gateway: text produced, usage, whether a choice finished. */
export interface ChunkFacts {
  chars: number;
  finished: boolean;
  usage: Usage | null;
  /** No choices, only usage: the chunk Plinth asked for with include_usage. */
  usageOnly: boolean;
  /** The upstream put an error object in the stream. */
  error: string | null;
}

export function readChunk(chunk: unknown): ChunkFacts {
  if (!isObject(chunk)) throw malformed('stream chunk not an object');
  if (chunk.error !== undefined && chunk.error !== null) {
    const e = chunk.error;
    const msg = isObject(e) && typeof e.message === 'string' ? e.message : typeof e === 'string' ? e : 'error';
    return { chars: 0, finished: false, usage: null, usageOnly: false, error: msg };
  }
  const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
  let chars = 0;
  let finished = false;
  for (const c of choices) {
    if (!isObject(c)) continue;
    if (isObject(c.delta) && typeof c.delta.content === 'string') chars += c.delta.content.length;
    if (typeof c.finish_reason === 'string') finished = true;
  }
  const usage = readUsage(chunk.usage);
  return { chars, finished, usage, usageOnly: choices.length === 0 && usage !== null, error: null };
}
