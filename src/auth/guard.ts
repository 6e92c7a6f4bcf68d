import { AppError } from '../errors/index.js';
import type { Counter } from '../lib/counter.js';
import { sha256Hex } from '../lib/crypto.js';

/** A limit: at most `max` events per `windowMs`. */
export interface Limit {
  max: number;
  windowMs: number;
}

export interface GuardLimits {
  /** Failed sign-ins per email address (from anywhere). */
  perEmail: Limit;
  /** Failed sign-ins per client IP (any email). */
  perIp: Limit;
  /** Emails with codes sent per address (verification and reset). */
  mailsPerEmail: Limit;
  /** Wrong second-factor codes (TOTP, recovery) per user. */
  mfaPerUser: Limit;
  /** Anonymous sign-ins per client IP. */
  anonymousPerIp: Limit;
}

export const DEFAULT_GUARD_LIMITS: GuardLimits = {
  perEmail: { max: 10, windowMs: 15 * 60_000 },
  perIp: { max: 50, windowMs: 15 * 60_000 },
  mailsPerEmail: { max: 5, windowMs: 15 * 60_000 },
  mfaPerUser: { max: 10, windowMs: 15 * 60_000 },
  anonymousPerIp: { max: 30, windowMs: 60 * 60_000 },
};

// Keys hash the email so Redis and memory never hold addresses in clear.
const emailKey = (kind: string, email: string) => `${kind}:e:${sha256Hex(email).slice(0, 32)}`;
const ipKey = (ip: string) => `signin:ip:${ip}`;

function tooMany(resetMs: number, what: string): AppError {
  const seconds = Math.max(1, Math.ceil(resetMs / 1000));
  return new AppError('RATE_LIMITED', {
    message: `Too many ${what}; try again in ${seconds} seconds.`,
    headers: { 'retry-after': String(seconds) },
  });
}

/**
 * Brute-force guard on top of the global rate limit: counts failed sign-ins per email and
 * per IP, and code emails per address. Blocked callers get 429 before any password check.
 */
export class AuthGuard {
  constructor(
    private readonly counter: Counter,
    private readonly limits: GuardLimits = DEFAULT_GUARD_LIMITS,
  ) {}

  /** Throws RATE_LIMITED when this email or IP has failed too often. */
  async checkSignIn(email: string, ip: string): Promise<void> {
    const [byEmail, byIp] = await Promise.all([
      this.counter.peek(emailKey('signin', email)),
      this.counter.peek(ipKey(ip)),
    ]);
    if (byEmail.count >= this.limits.perEmail.max) throw tooMany(byEmail.resetMs, 'failed sign-ins for this email');
    if (byIp.count >= this.limits.perIp.max) throw tooMany(byIp.resetMs, 'failed sign-ins from this address');
  }

  async signInFailed(email: string, ip: string): Promise<void> {
    await Promise.all([
      this.counter.hit(emailKey('signin', email), this.limits.perEmail.windowMs),
      this.counter.hit(ipKey(ip), this.limits.perIp.windowMs),
    ]);
  }

  /** A successful sign-in forgives the email's earlier failures (not the IP's). */
  async signInSucceeded(email: string): Promise<void> {
    await this.counter.clear(emailKey('signin', email));
  }

  /** Counts one code email to this address; throws RATE_LIMITED past the limit. */
  async mailSent(email: string): Promise<void> {
    const { count, resetMs } = await this.counter.hit(emailKey('mail', email), this.limits.mailsPerEmail.windowMs);
    if (count > this.limits.mailsPerEmail.max) throw tooMany(resetMs, 'emails to this address');
  }

  /** Throws RATE_LIMITED when this user has entered too many wrong second-factor codes. */
  async checkMfa(userId: string): Promise<void> {
    const { count, resetMs } = await this.counter.peek(`mfa:u:${userId}`);
    if (count >= this.limits.mfaPerUser.max) throw tooMany(resetMs, 'wrong MFA codes for this account');
  }

  async mfaFailed(userId: string): Promise<void> {
    await this.counter.hit(`mfa:u:${userId}`, this.limits.mfaPerUser.windowMs);
  }

  /** Counts one anonymous sign-in from this IP; throws RATE_LIMITED past the limit. */
  async anonymousSignIn(ip: string): Promise<void> {
    const { count, resetMs } = await this.counter.hit(`anon:ip:${ip}`, this.limits.anonymousPerIp.windowMs);
    if (count > this.limits.anonymousPerIp.max) throw tooMany(resetMs, 'anonymous sign-ins from this address');
  }
}
