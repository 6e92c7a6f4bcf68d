import { AppError } from '../errors/index.js';
import { estimateUsage, type Usage } from './shape.js';
import { ClientGoneError } from './upstream.js';
import type { CallerKind, UsageRecord, UsageStore } from './usage-store.js';

/** Status recorded when the client disconnected before the answer was complete (nginx's convention). */
export const CLIENT_CLOSED = 499;

export type Caller = { kind: CallerKind; userId: string | null };

/** Who calls and how the call ends early: the caller's identity, its disconnect signal, its log. */
export interface CallContext {
  caller: Caller;
  /** Aborted when the client goes away: the upstream call stops with it. */
  signal: AbortSignal;
  /** Where background failures (a usage row that could not be written) are reported. */
  logError: (err: unknown, msg: string) => void;
}

/** One call being metered: who makes it, to what, and when it started. */
export interface MeteredCall {
  caller: Caller;
  endpoint: 'chat' | 'images' | 'embeddings';
  model: string;
  stream: boolean;
  /** performance.now() when the call was sent upstream. */
  started: number;
  /** Characters of the prompt, to estimate tokens when the upstream does not say (chat only). */
  promptChars?: number;
  /** Where a usage row that could not be written is reported (the request log). */
  logError: (err: unknown, msg: string) => void;
}

/** How a call ended, as far as accounting is concerned. */
export interface CallOutcome {
  usage: Usage | null;
  /** The tokens are Plinth's estimate, not the upstream's count. */
  estimated: boolean;
  status: number;
  error?: string | null;
  images?: number;
}

/**
 * Budgets and usage accounting: the daily token budget per user (AI_USER_DAILY_TOKENS; admins
 * have none, anon callers share one) and one usage row per call, whatever its outcome.
 */
export class UsageMeter {
  constructor(
    readonly store: UsageStore,
    /** Tokens per UTC day per user, or null for no budget. */
    private readonly dailyTokens: number | null,
    /** Hears every usage row (metrics: AI tokens). */
    private readonly onRecord?: (row: { promptTokens: number; completionTokens: number }) => void,
  ) {}

  /** 429 once today's (UTC) tokens reach the budget. */
  async checkBudget(caller: Caller): Promise<void> {
    const budget = this.dailyTokens;
    if (budget === null || caller.kind === 'admin') return;
    const now = new Date();
    const dayStart = utcDayStart(now);
    const used = await this.store.tokensSince(caller, dayStart);
    if (used >= budget) {
      const retryAfter = Math.max(1, Math.ceil((dayStart.getTime() + 86_400_000 - now.getTime()) / 1000));
      throw new AppError('AI_BUDGET_EXCEEDED', {
        message: `The daily AI budget of ${budget} tokens is spent (${used} used today, UTC).`,
        headers: { 'retry-after': String(retryAfter) },
      });
    }
  }

  /** A caller's tokens today (UTC) against the daily budget. */
  async today(
    caller: Caller,
  ): Promise<{ date: string; totalTokens: number; budget: number | null; remaining: number | null }> {
    const dayStart = utcDayStart(new Date());
    const used = await this.store.tokensSince(caller, dayStart);
    const budget = caller.kind === 'admin' ? null : this.dailyTokens;
    return {
      date: dayStart.toISOString().slice(0, 10),
      totalTokens: used,
      budget,
      remaining: budget === null ? null : Math.max(0, budget - used),
    };
  }

  /** Records a call that got an answer (or a stream that ended, however it ended). */
  record(call: MeteredCall, outcome: CallOutcome): void {
    const row: UsageRecord = {
      userId: call.caller.kind === 'user' ? call.caller.userId : null,
      caller: call.caller.kind,
      endpoint: call.endpoint,
      model: call.model,
      stream: call.stream,
      promptTokens: outcome.usage?.prompt_tokens ?? 0,
      completionTokens: outcome.usage?.completion_tokens ?? 0,
      totalTokens: outcome.usage?.total_tokens ?? 0,
      images: outcome.images ?? 0,
      estimated: outcome.estimated,
      latencyMs: performance.now() - call.started,
      status: outcome.status,
      error: outcome.error ?? null,
    };
    this.onRecord?.(row);
    this.store.record(row, (err) => call.logError(err, 'could not record AI usage'));
  }

  /**
   * Records a call that failed before an answer. A client that hung up may have left the
   * upstream working on its prompt: that prompt is estimated, as for a stream cut short.
   */
  recordFailure(call: MeteredCall, err: unknown): void {
    const gone = err instanceof ClientGoneError;
    const estimate = gone && call.promptChars !== undefined;
    this.record(call, {
      usage: estimate ? estimateUsage(call.promptChars!, 0) : null,
      estimated: estimate,
      status: gone ? CLIENT_CLOSED : err instanceof AppError ? err.status : 500,
      error: gone ? null : err instanceof AppError ? err.code : 'INTERNAL_ERROR',
    });
  }
}

function utcDayStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}
