// The auth services as the composition root builds them: siblings on one set of deps (guard,
// codes, the email area's templates and mailer), each telling the log store's audit of its
// sign-ins through the same hooks.
import type { Redis } from 'ioredis';
import type { Config } from '../config/index.js';
import type { Db } from '../db/types.js';
import type { EmailService } from '../email/service.js';
import { FallbackCounter, MemoryCounter, RedisCounter } from '../lib/counter.js';
import type { LogsService } from '../logs/index.js';
import { AnonymousUsers } from './anonymous.js';
import { AuditedAuthService, auditHooks } from './audit.js';
import { CodeMail } from './code-mail.js';
import { EmailCodes } from './codes.js';
import type { AuthServiceDeps } from './context.js';
import { AuthGuard } from './guard.js';
import type { SignInHooks } from './hooks.js';
import { MagicLinks } from './magic-link.js';
import { MfaService } from './mfa.js';
import type { AuthParts, AuthService } from './service.js';
import { SessionIssuer } from './signin.js';
import type { TokenSigner } from './tokens.js';

/** The auth service (audited into the log store), its brute-force guard shared through Redis when there is one; users deleted on `ownerDb`. */
export function createAuth(
  config: Readonly<Config>,
  p: {
    db: Db;
    tokens: TokenSigner;
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
  const deps: AuthServiceDeps = {
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
  };
  return new AuditedAuthService(deps, authParts(deps, auditHooks(p.logs)), p.logs);
}

/** The services beside the main one: sessions, mailed codes, MFA, anonymous users, magic links. */
function authParts(deps: AuthServiceDeps, hooks: SignInHooks): AuthParts {
  const issuer = new SessionIssuer(deps);
  const codeMail = new CodeMail(deps);
  return {
    issuer,
    codeMail,
    mfa: new MfaService({ ...deps, issuer, hooks }),
    anonymous: new AnonymousUsers({
      ...deps,
      issuer,
      sendVerification: (row, ctx) => codeMail.send(row, 'verify_email', ctx),
      hooks,
    }),
    magicLinks: new MagicLinks({ ...deps, issuer, hooks }),
  };
}
