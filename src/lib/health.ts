/**
 * A named probe for GET /api/health?checks=true; `run` throws when the part is down. A
 * required part down makes the answer 503; an optional one (a third-party upstream such as
 * the AI provider or the mail server) is reported without failing readiness, since
 * restarting or removing this instance would not bring it back.
 */
export interface HealthCheck {
  /** May report the part as working but degraded (e.g. a disk nearly full), with figures shown beside the status. */
  // biome-ignore lint/suspicious/noConfusingVoidType: most checks are `async () => void (await probe())`
  run: () => Promise<void | { degraded?: string; info?: Record<string, number | string> }>;
  required: boolean;
  /** Shown beside the status, e.g. the database engine. */
  info?: Record<string, string>;
}
