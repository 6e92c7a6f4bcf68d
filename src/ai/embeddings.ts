// Embeddings: the OpenAI request and answer, checked and metered. The answer also carries
// InsForge's `metadata` ({model, usage} in camelCase), so one answer serves the openai
// package and the InsForge SDK alike.
import { AppError } from '../errors/index.js';
import { estimateUsage, isObject, type Usage } from './shape.js';

export interface EmbeddingsRequest {
  model?: string;
  input: string | Array<string | number | number[]>;
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
  [k: string]: unknown;
}

export interface EmbeddingsAnswer {
  object: 'list';
  data: Array<{ object: 'embedding'; embedding: number[] | string; index: number }>;
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
  metadata: { model: string; usage: { promptTokens: number; totalTokens: number } };
  [extra: string]: unknown;
}

const isTokens = (v: unknown): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 1_000_000_000;

function malformed(what: string): AppError {
  return new AppError('AI_UPSTREAM_ERROR', {
    message: 'The AI provider sent an answer Plinth does not understand.',
    cause: new Error(`malformed upstream embeddings answer: ${what}`),
  });
}

/** Characters of the text inputs (token arrays count ~4 characters a token), for an estimate. */
function inputChars(input: unknown): number {
  if (typeof input === 'string') return input.length;
  if (!Array.isArray(input)) return 0;
  return input.reduce<number>((n, x) => n + (typeof x === 'number' ? 4 : inputChars(x)), 0);
}

/**
 * The upstream answer in OpenAI's shape plus `metadata`. `usage` is null when the upstream
 * reported none (the meter then records an estimate from the input's length).
 */
export function shapeEmbeddings(
  raw: unknown,
  model: string,
  input: unknown,
): { answer: EmbeddingsAnswer; usage: Usage; estimated: boolean } {
  if (!isObject(raw) || !Array.isArray(raw.data)) throw malformed('no data array');
  const data = raw.data.map((d: unknown, i: number) => {
    if (!isObject(d) || (!Array.isArray(d.embedding) && typeof d.embedding !== 'string'))
      throw malformed('item without embedding');
    return {
      object: 'embedding' as const,
      embedding: d.embedding as number[] | string,
      index: typeof d.index === 'number' ? d.index : i,
    };
  });
  const u = isObject(raw.usage) ? raw.usage : {};
  const given = isTokens(u.prompt_tokens);
  const usage: Usage = given
    ? {
        prompt_tokens: u.prompt_tokens as number,
        completion_tokens: 0,
        total_tokens: isTokens(u.total_tokens) ? u.total_tokens : (u.prompt_tokens as number),
      }
    : estimateUsage(inputChars(input), 0);
  const name = typeof raw.model === 'string' && raw.model ? raw.model : model;
  return {
    answer: {
      object: 'list',
      data,
      model: name,
      usage: { prompt_tokens: usage.prompt_tokens, total_tokens: usage.total_tokens },
      metadata: { model: name, usage: { promptTokens: usage.prompt_tokens, totalTokens: usage.total_tokens } },
    },
    usage,
    estimated: !given,
  };
}
