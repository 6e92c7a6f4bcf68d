// What the front lane's handlers (and front-lane.ts itself) answer with: one definition each.
import type { IncomingMessage } from 'node:http';
import type { Identity } from '../../auth/identity.js';

/** The media type of every JSON answer, as Fastify sends it. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/** A media type Fastify parses (its ContentType: type/subtype tokens); it answers any other 415 (or reads it as none). */
export const MEDIA_TYPE = /^\s*[\w!#$%&'*+.^`|~-]+\/[\w!#$%&'*+.^`|~-]+\s*(?:;|$)/;

/** The caller of a request without a credential (or whose credential was refused). */
export const NOBODY: Identity = Object.freeze({ kind: 'none' });

/** The request's protocol as Fastify's `request.protocol` reads it without TRUST_PROXY (the lane is closed with it). */
export function protocolOf(req: IncomingMessage): string {
  return (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
}
