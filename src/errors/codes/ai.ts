import type { ErrorSpec } from '../spec.js';

/** The AI gateway. */
export const AI_ERRORS = {
  // ai
  AI_NOT_CONFIGURED: {
    status: 503,
    message: 'The AI gateway is not configured on this server.',
    nextActions:
      'The operator must set AI_BASE_URL (e.g. https://api.openai.com/v1) and AI_API_KEY, then restart Plinth; docs/ai.md shows settings for OpenAI, OpenRouter and local servers.',
  },
  MODEL_NOT_ALLOWED: {
    status: 400,
    message: 'This model is not allowed on this server.',
    nextActions: 'Use one of the models listed in AI_MODELS, or ask the operator to add it.',
  },
  AI_UPSTREAM_REJECTED: {
    status: 400,
    message: 'The AI provider rejected the request.',
    nextActions: 'Fix the request as the message says (model name, parameters, message format) and send it again.',
  },
  AI_UPSTREAM_RATE_LIMITED: {
    status: 429,
    message: 'The AI provider is limiting requests from this server.',
    nextActions: 'Wait a little (see Retry-After when present) and try again.',
  },
  AI_UPSTREAM_ERROR: {
    status: 502,
    message: 'The AI provider failed or could not be reached.',
    nextActions:
      'Try again shortly; if it keeps failing, the operator should check AI_BASE_URL, AI_API_KEY and the provider status.',
  },
  AI_UPSTREAM_TIMEOUT: {
    status: 504,
    message: 'The AI provider did not answer in time.',
    nextActions:
      'Try again, with a shorter prompt, a lower max_tokens or stream: true; the operator can raise AI_TIMEOUT_MS.',
  },
  AI_BUDGET_EXCEEDED: {
    status: 429,
    message: 'The daily AI token budget is spent.',
    nextActions: 'Try again after midnight UTC (see Retry-After), or ask the operator to raise AI_USER_DAILY_TOKENS.',
  },
} as const satisfies Record<string, ErrorSpec>;
