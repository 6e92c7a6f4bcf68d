// InsForge's AI shapes (the `@insforge/sdk` client): camelCase chat requests, answers as
// {text, metadata: {model, usage}}, a stream of {"chunk"} events ending with {"done": true},
// and images as data URIs. Converted to and from the OpenAI shapes the gateway speaks.
import { AppError } from '../errors/index.js';
import type { ChatMessage, ChatRequest } from './gateway.js';
import { isObject, type ChatCompletion, type ImagesAnswer, type Usage } from './shape.js';

/** camelCase request keys of InsForge and their OpenAI names. */
const RENAMED: Record<string, string> = {
  maxTokens: 'max_tokens',
  topP: 'top_p',
  toolChoice: 'tool_choice',
  parallelToolCalls: 'parallel_tool_calls',
};
/** InsForge options with no OpenAI counterpart: dropped (docs/clients.md says so). */
const DROPPED = new Set(['webSearch', 'fileParser', 'thinking']);

export interface InsforgeUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export const insforgeUsage = (u: Usage): InsforgeUsage => ({
  promptTokens: u.prompt_tokens,
  completionTokens: u.completion_tokens,
  totalTokens: u.total_tokens,
});

/** A legacy message with `images: [{url}]` becomes OpenAI content parts. */
function message(m: ChatMessage): ChatMessage {
  const { images, ...rest } = m;
  if (!Array.isArray(images) || images.length === 0) return m;
  const parts: unknown[] =
    typeof rest.content === 'string'
      ? [{ type: 'text', text: rest.content }]
      : Array.isArray(rest.content)
        ? [...rest.content]
        : [];
  for (const img of images) {
    const url = isObject(img) ? img.url : img;
    if (typeof url !== 'string')
      throw new AppError('INVALID_INPUT', { message: 'Each entry of a message\'s "images" needs a url.' });
    parts.push({ type: 'image_url', image_url: { url } });
  }
  return { ...rest, content: parts };
}

/** An InsForge chat request as the OpenAI request the gateway forwards. */
export function fromInsforgeChat(body: Record<string, unknown>): ChatRequest {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (v === undefined || DROPPED.has(k)) continue;
    out[RENAMED[k] ?? k] = v;
  }
  const messages = (out.messages as ChatMessage[]).map(message);
  return { ...out, messages } as ChatRequest;
}

/** An OpenAI chat completion as InsForge's answer. */
export function toInsforgeChat(c: ChatCompletion) {
  const msg = c.choices[0]?.message;
  const toolCalls = msg?.tool_calls;
  const annotations = msg?.annotations;
  return {
    text: msg?.content ?? '',
    ...(Array.isArray(toolCalls) && toolCalls.length ? { tool_calls: toolCalls } : {}),
    ...(Array.isArray(annotations) ? { annotations } : {}),
    metadata: { model: c.model, usage: insforgeUsage(c.usage) },
  };
}

const event = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;

/**
 * The gateway's OpenAI SSE frames as InsForge events: `{"chunk": text}` per piece of text,
 * `{"tool_calls": [...]}` for tool-call deltas, `{"done": true}` at the end; an error event
 * passes through as `{"error": ...}` (the stream then ends without done).
 */
export async function* toInsforgeStream(frames: AsyncIterable<string>): AsyncGenerator<string> {
  for await (const batch of frames) {
    let out = '';
    for (const line of batch.split('\n')) {
      if (!line.startsWith('data: ')) continue;
      const data = line.slice(6);
      if (data === '[DONE]') {
        out += event({ done: true });
        continue;
      }
      const chunk = JSON.parse(data) as Record<string, unknown>;
      if (isObject(chunk.error)) {
        out += event({ error: chunk.error });
        continue;
      }
      const choice = Array.isArray(chunk.choices) && isObject(chunk.choices[0]) ? chunk.choices[0] : null;
      const delta = choice && isObject(choice.delta) ? choice.delta : null;
      if (typeof delta?.content === 'string' && delta.content !== '') out += event({ chunk: delta.content });
      if (Array.isArray(delta?.tool_calls)) out += event({ tool_calls: delta.tool_calls });
    }
    if (out) yield out;
  }
}

/** An OpenAI image answer as InsForge's: images as data URIs (b64_json), or the URL as given. */
export function toInsforgeImages(a: ImagesAnswer, model: string) {
  const text = a.data.map((d) => d.revised_prompt).find((p): p is string => typeof p === 'string');
  return {
    ...(text ? { text } : {}),
    images: a.data.map((d) => ({
      type: 'imageUrl',
      imageUrl: typeof d.b64_json === 'string' ? `data:image/png;base64,${d.b64_json}` : d.url!,
    })),
    metadata: { model, ...(isObject(a.usage) ? { usage: a.usage } : {}) },
  };
}
