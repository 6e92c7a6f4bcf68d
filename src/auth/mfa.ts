import type { Db } from '../db/types.js';
import { AppError } from '../errors/index.js';
import type { AuthGuard } from './guard.js';
import { amrEntry, type SessionIssuer, type SignedIn } from './signin.js';
import type { AuthContext } from './context.js';
import { heard, type SignInHooks } from './hooks.js';
import type { AccessClaims } from './tokens.js';
import { Totp } from './totp.js';
import * as store from './mfa-store.js';
import * as sessions from './sessions.js';
import * as users from './users.js';
import type { FactorSummary } from './users.js';

/** The signed-in caller of an MFA endpoint. */
export interface MfaCaller {
  userId: string;
  sessionId: string;
  claims: AccessClaims;
}

export interface Enrolled {
  id: string;
  type: 'totp';
  friendlyName: string | null;
  secret: string;
  uri: string;
  /** The QR code of `uri`, an SVG document. */
  qrCode: string;
  /** Supabase's shape of the same (`totp.qr_code` is a data URI there too). */
  totp: { qr_code: string; secret: string; uri: string };
}

const wrongCode = () =>
  new AppError('INVALID_CODE', {
    message: 'The code is wrong, already used, or from another time step.',
    nextActions:
      'Enter the current 6-digit code of your authenticator app (or an unused recovery code); each code works once.',
  });

/**
 * TOTP second factors: enrol, verify (activates, or steps a session up to aal2), the
 * challenge that finishes a sign-in, recovery codes, unenrol and the admin reset.
 */
export class MfaService {
  private readonly totp: Totp;

  constructor(
    private readonly deps: { db: Db; issuer: SessionIssuer; guard: AuthGuard; secret: string; hooks?: SignInHooks },
  ) {
    this.totp = new Totp(deps.secret);
  }

  async list(userId: string): Promise<FactorSummary[]> {
    const row = await users.userById(this.deps.db, userId);
    return row?.factors ?? [];
  }

  /**
   * A new, unverified TOTP factor: its secret, `otpauth://` URI and QR code, shown this once.
   * A user who already has an active factor needs an aal2 session for it.
   */
  async enroll(caller: MfaCaller, input: { friendlyName?: string; issuer?: string }): Promise<Enrolled> {
    const row = await users.userById(this.deps.db, caller.userId);
    if (!row) throw new AppError('AUTH_UNAUTHORIZED', { message: 'The user of this access token no longer exists.' });
    // Once a factor is active, only an aal2 session may add one: a stolen password session
    // must not be able to add its own authenticator and step up with it.
    if ((row.factors ?? []).some((f) => f.status === 'verified') && caller.claims.aal !== 'aal2')
      throw new AppError('AAL2_REQUIRED');
    const secret = await this.totp.newSecret();
    const factor = await this.deps.db.transaction((tx) =>
      store.insertFactor(tx, {
        userId: row.id,
        friendlyName: input.friendlyName?.trim() || null,
        secretEnc: this.totp.encrypt(secret),
      }),
    );
    if (!factor)
      throw new AppError('MFA_FACTOR_LIMIT', { message: `An account has at most ${store.MAX_FACTORS} factors.` });
    const uri = await this.totp.uri(secret, input.issuer?.trim() || 'Plinth', row.email || row.id);
    const qrCode = await this.totp.qrSvg(uri);
    const dataUri = `data:image/svg+xml;utf-8,${encodeURIComponent(qrCode)}`;
    return {
      id: factor.id,
      type: 'totp',
      friendlyName: factor.friendly_name,
      secret,
      uri,
      qrCode,
      totp: { qr_code: dataUri, secret, uri },
    };
  }

  /**
   * Checks a code of one of the caller's factors: activates it when new, and answers a fresh
   * session at aal2 (the old one ends). Activating a factor (enrolment) ends every other session
   * of the user too, as Supabase does: one opened before it, at aal1, must not stay valid and
   * refresh forever. The first activation also answers the recovery codes, shown this once.
   */
  async verify(
    caller: MfaCaller,
    factorId: string,
    code: string,
    ctx: AuthContext,
  ): Promise<SignedIn & { recoveryCodes?: string[] }> {
    await this.deps.guard.checkMfa(caller.userId);
    const factor = await store.factorOf(this.deps.db, caller.userId, factorId);
    if (!factor) throw new AppError('MFA_FACTOR_NOT_FOUND');
    await this.checkTotp(factor, code);
    if (factor.status === 'unverified') await sessions.revokeUserSessions(this.deps.db, caller.userId, null);
    const fresh = this.totp.newRecoveryCodes();
    const hmacs = fresh.map((c) => this.totp.recoveryHmac(caller.userId, c));
    const recoveryCodes = (await store.addFirstRecoveryCodes(this.deps.db, caller.userId, hmacs)) ? fresh : undefined;
    const row = await users.userById(this.deps.db, caller.userId);
    if (!row) throw new AppError('AUTH_UNAUTHORIZED', { message: 'The user of this access token no longer exists.' });
    const signedIn = await this.deps.issuer.open(row, ctx, 'aal2', [...(caller.claims.amr ?? []), amrEntry('totp')]);
    await sessions.revokeSession(this.deps.db, caller.sessionId);
    return recoveryCodes ? { ...signedIn, recoveryCodes } : signedIn;
  }

  /**
   * The second step of a sign-in: the challenge token and a code of one of the user's
   * verified factors (or a recovery code) open a session at aal2.
   */
  challenge(
    input: { token: string; factorId?: string; code?: string; recoveryCode?: string },
    ctx: AuthContext,
  ): Promise<SignedIn> {
    return heard(this.deps.hooks, 'mfa', ctx, () => this.secondFactor(input, ctx));
  }

  private async secondFactor(
    input: { token: string; factorId?: string; code?: string; recoveryCode?: string },
    ctx: AuthContext,
  ): Promise<SignedIn> {
    if (
      (input.code === undefined) === (input.recoveryCode === undefined) ||
      (input.code !== undefined && input.factorId === undefined)
    ) {
      throw new AppError('INVALID_INPUT', {
        message: 'Send {token, factorId, code} with a code of the authenticator app, or {token, recoveryCode}.',
        nextActions: 'Take factorId from challenge.factors of the sign-in answer.',
      });
    }
    const c = await this.deps.issuer.tryChallenge(input.token);
    await this.deps.guard.checkMfa(c.userId);
    let method: 'totp' | 'recovery' = 'totp';
    try {
      if (input.recoveryCode !== undefined) {
        method = 'recovery';
        await this.useRecoveryCode(c.userId, input.recoveryCode);
      } else {
        const factor = await store.factorOf(this.deps.db, c.userId, input.factorId!);
        if (factor?.status !== 'verified') throw new AppError('MFA_FACTOR_NOT_FOUND');
        await this.checkTotp(factor, input.code!);
      }
    } catch (err) {
      await c.settle(false);
      throw err;
    }
    if (!(await c.settle(true))) throw wrongCode();
    const row = await users.userById(this.deps.db, c.userId);
    if (!row) throw wrongCode();
    return this.deps.issuer.open(row, ctx, 'aal2', [...c.amr, amrEntry(method)]);
  }

  /**
   * Removes a factor. A verified one needs a current code: of this factor, or an unused
   * recovery code. The last verified factor takes the recovery codes with it.
   */
  async unenroll(caller: MfaCaller, factorId: string, input: { code?: string; recoveryCode?: string }): Promise<void> {
    const factor = await store.factorOf(this.deps.db, caller.userId, factorId);
    if (!factor) throw new AppError('MFA_FACTOR_NOT_FOUND');
    if (factor.status === 'verified') {
      if (input.code === undefined && input.recoveryCode === undefined) {
        throw new AppError('INVALID_INPUT', {
          message: 'Removing an active factor needs a current code: send {code} (of this factor) or {recoveryCode}.',
          nextActions: 'Send the 6-digit code your authenticator app shows now, or one of your recovery codes.',
        });
      }
      await this.deps.guard.checkMfa(caller.userId);
      if (input.code !== undefined) await this.checkTotp(factor, input.code);
      else await this.useRecoveryCode(caller.userId, input.recoveryCode!);
    }
    await this.deps.db.transaction(async (tx) => {
      await store.deleteFactor(tx, factor.id);
      if ((await store.verifiedFactors(tx, caller.userId)).length === 0) await store.resetUser(tx, caller.userId);
    });
  }

  /** New recovery codes (the old ones stop working); needs a session at aal2. */
  async regenerateRecoveryCodes(caller: MfaCaller): Promise<string[]> {
    if (caller.claims.aal !== 'aal2') throw new AppError('AAL2_REQUIRED');
    if ((await store.verifiedFactors(this.deps.db, caller.userId)).length === 0)
      throw new AppError('MFA_FACTOR_NOT_FOUND');
    const codes = this.totp.newRecoveryCodes();
    await store.replaceRecoveryCodes(
      this.deps.db,
      caller.userId,
      codes.map((c) => this.totp.recoveryHmac(caller.userId, c)),
    );
    return codes;
  }

  /** Admin: removes every factor and recovery code of a user (who lost the device and the codes). */
  async adminReset(userId: string): Promise<number> {
    if (!(await users.userById(this.deps.db, userId))) throw new AppError('USER_NOT_FOUND');
    return this.deps.db.transaction((tx) => store.resetUser(tx, userId));
  }

  /** A right code of a time step later than the last one used, or INVALID_CODE (counted by the guard). */
  private async checkTotp(factor: store.FactorRow, code: string): Promise<void> {
    const step = await this.totp.check(this.totp.decrypt(factor.secret_enc), code);
    if (step === null || !(await store.acceptStep(this.deps.db, factor.id, step))) {
      await this.deps.guard.mfaFailed(factor.user_id);
      throw wrongCode();
    }
  }

  private async useRecoveryCode(userId: string, code: string): Promise<void> {
    if (!(await store.useRecoveryCode(this.deps.db, userId, this.totp.recoveryHmac(userId, code)))) {
      await this.deps.guard.mfaFailed(userId);
      throw wrongCode();
    }
  }
}
