import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/index.js';

/** A Host header as a browser or client sends it: a DNS name or IP literal, an optional port. */
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The absolute base of URLs handed to clients (upload and download links, a function's
 * request URL): PUBLIC_URL, else this request's own origin. Without PUBLIC_URL the Host header
 * decides, so a malformed one (a path, `@`, spaces: the shapes that make a link point elsewhere)
 * is refused; the server warns at start when PUBLIC_URL is unset on a public interface.
 */
export function publicOrigin(request: FastifyRequest, publicUrl: string | null): string {
  return originOf(request.host, request.protocol, publicUrl);
}

/**
 * `publicOrigin` from a request's Host header (`''` when it has none) and protocol: what the
 * front lane, which has no Fastify request, calls (it takes no request behind a proxy, so Host
 * and the socket are what Fastify's `request.host` and `request.protocol` read then).
 */
export function originOf(host: string, protocol: string, publicUrl: string | null): string {
  if (publicUrl !== null) return publicUrl;
  if (!HOST.test(host)) {
    throw new AppError('INVALID_INPUT', {
      message: 'The Host header is not a host name with an optional port, so no link can be built from it.',
      nextActions:
        'Send a plain Host header (e.g. "api.example.com"); the operator should set PUBLIC_URL to the public address.',
    });
  }
  return `${protocol}://${host}`;
}
