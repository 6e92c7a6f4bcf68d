import { bool, int, list, oneOf, raw, type Reader } from './reader.js';

/** Schedules, webhooks, email and the job queue (docs/schedules.md, docs/webhooks.md, docs/email.md). */
export interface AutomationConfig {
  /** Hosts, host:port pairs and CIDRs that outbound requests may reach although private. */
  outboundAllowHosts: string[];
  /** Most jobs waiting (not running) across queues; past it, enqueuing answers QUEUE_FULL. */
  jobsMaxQueued: number;
  schedules: {
    /** How often each instance looks for due schedules. */
    tickMs: number;
    runRetentionDays: number;
    /** Runs kept per schedule at most, newest first. */
    runsKept: number;
    /** Default catch-up policy for runs missed while every instance was down. */
    catchUp: 'one' | 'none';
  };
  webhooks: {
    /** Attempts per delivery (the first included) before it is marked failed. */
    maxAttempts: number;
    retryDelaySeconds: number;
    timeoutMs: number;
    /** A change larger than this is delivered without its record (`truncated: true`). */
    maxPayloadBytes: number;
    deliveryRetentionDays: number;
    /** How often each instance looks at the webhook outbox. */
    pollMs: number;
  };
  email: {
    allowUsers: boolean;
    /** Emails per caller per minute (admin included). */
    perMinute: number;
    /** NODE_ENV=production: no mail catcher; the email API answers 503 without SMTP_URL. */
    production: boolean;
    /** Attempts per queued mail (the first included) before it is marked failed. */
    maxAttempts: number;
    /** The first retry's delay; each next one doubles (with jitter). */
    retryDelaySeconds: number;
    /** Sent and failed mails are listed (and deleted after) this many days. */
    retentionDays: number;
  };
}

export function readAutomation(r: Reader): AutomationConfig {
  return {
    outboundAllowHosts: list(r, 'OUTBOUND_ALLOW_HOSTS') ?? [],
    jobsMaxQueued: int(r, 'JOBS_MAX_QUEUED', 100_000, 100, 100_000_000),
    schedules: {
      tickMs: int(r, 'SCHEDULE_TICK_MS', 250, 50, 60_000),
      runRetentionDays: int(r, 'SCHEDULE_RUN_RETENTION_DAYS', 7, 1, 3650),
      runsKept: int(r, 'SCHEDULE_RUNS_KEPT', 1000, 10, 1_000_000),
      catchUp: oneOf(r, 'SCHEDULE_CATCH_UP', ['one', 'none'] as const, 'one'),
    },
    webhooks: {
      maxAttempts: int(r, 'WEBHOOK_MAX_ATTEMPTS', 8, 1, 50),
      retryDelaySeconds: int(r, 'WEBHOOK_RETRY_DELAY_SECONDS', 10, 1, 3600),
      timeoutMs: int(r, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
      maxPayloadBytes: int(r, 'WEBHOOK_MAX_PAYLOAD_BYTES', 256 * 1024, 1024, 16 * 1024 * 1024),
      deliveryRetentionDays: int(r, 'WEBHOOK_DELIVERY_RETENTION_DAYS', 7, 1, 3650),
      pollMs: int(r, 'WEBHOOK_POLL_MS', 100, 10, 60_000),
    },
    email: {
      allowUsers: bool(r, 'EMAIL_ALLOW_USERS', false),
      perMinute: int(r, 'EMAIL_PER_MINUTE', 60, 1, 1_000_000),
      production: raw(r, 'NODE_ENV') === 'production',
      maxAttempts: int(r, 'EMAIL_MAX_ATTEMPTS', 10, 1, 50),
      retryDelaySeconds: int(r, 'EMAIL_RETRY_DELAY_SECONDS', 30, 1, 3600),
      retentionDays: int(r, 'EMAIL_RETENTION_DAYS', 7, 1, 3650),
    },
  };
}
