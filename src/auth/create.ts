// The auth service as the composition root builds it: its parts (guard, codes, the email
// area's templates and mailer) and its audit into the log store.
import type { Redis } from 'ioredis';
import type { Config } from '../config/index.js';
import type { Db } from '../db/types.js';
import type { EmailService } from '../email/service.js';
import { FallbackCounter, MemoryCounter, RedisCounter } from '../lib/counter.js';
import type { LogsService } from '../logs/index.js';
import { AuditedAuthService } from './audit.js';
import { EmailCodes } from './codes.js';
import { AuthGuard } from './guard.js';
import type { Mailer } from './mailer.js';
import type { AuthService } from './service.js';
import type { TokenSigner } from './tokens.js';

/** The auth service (audited into the log store), its brute-force guard shared through Redis when there is one; users deleted on `ownerDb`. */
export function createAuth(
  config: Readonly<Config>,
  p: {
    db: Db;
    tokens: TokenSigner;
    mailer: Mailer;
    redis: Redis | null;
    email: Pick<EmailService, 'templates' | 'authMailer'>;
    logs: LogsService;
    secret: string;
  },
  ownerDb: Db,
): AuthService {
  const counter = p.redis
    ? new FallbackCounter(new RedisCounter(p.redis, 'plinth-auth:'), new MemoryCounter())
    : new MemoryCounter();
  return new AuditedAuthService(
    {
      templates: (purpose, vars) => p.email.templates.forPurpose(purpose, vars),
      db: p.db,
      ownerDb,
      tokens: p.tokens,
      mailer: p.email.authMailer,
      guard: new AuthGuard(counter),
      codes: new EmailCodes(p.secret),
      refreshTtlSeconds: config.auth.refreshTokenTtlSeconds,
      requireEmailVerification: config.auth.requireEmailVerification,
      anonymousSignIn: config.auth.anonymousSignIn,
      secret: p.secret,
      redirectUrls: config.auth.oauth.redirectUrls,
    },
    p.logs,
  );
}
