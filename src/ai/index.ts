import type { Config } from '../config/index.js';
import type { Queryable } from '../db/types.js';
import { AiGateway } from './gateway.js';
import { OpenAiUpstream } from './upstream.js';
import { UsageStore } from './usage-store.js';
import { UsageMeter } from './usage.js';

export { AiGateway } from './gateway.js';

/** The gateway for the configuration: an OpenAI-compatible upstream when AI_BASE_URL is set. */
export function createAiGateway(
  cfg: Readonly<Config['ai']>,
  db: Queryable,
  /** Hears the tokens of every call (metrics). */
  onTokens?: (usage: { promptTokens: number; completionTokens: number }) => void,
): AiGateway {
  const upstream = cfg.baseUrl
    ? new OpenAiUpstream({ baseUrl: cfg.baseUrl, apiKey: cfg.apiKey, timeoutMs: cfg.timeoutMs })
    : null;
  return new AiGateway(cfg, upstream, new UsageMeter(new UsageStore(db), cfg.userDailyTokens, onTokens));
}
