/**
 * RFC 9112, section 3.2: "A server MUST respond with a 400 (Bad Request) status code to any
 * HTTP/1.1 request message that [...] contains a Host header field with an invalid field value."
 * Checked once, first, for every operation of the API (whose answers build absolute URLs on the
 * client's host: the paging links, `portal_url`), so that every operation gives the same 400.
 */
import type { Request, RequestHandler } from 'express';
import { ApiError } from '../kernel/errors';

// RFC 3986 host (a name, IPv4, or a bracketed IPv6 literal) and an optional port.
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~!$&'()*+,;=%-]+)(?::\d{1,5})?$/;

/** The request's origin (`http://host:port`), or undefined when its Host is not a host. */
export function originOf(req: Request): string | undefined {
  const host = req.get('host') ?? '';
  if (!HOST.test(host)) return undefined;
  try {
    return new URL(`${req.protocol}://${host}`).origin;
  } catch {
    return undefined;
  }
}

export const refuseInvalidHost: RequestHandler = (req, _res, next) => {
  next(originOf(req) === undefined ? new ApiError('bad_request', 'The Host header is not a valid host.') : undefined);
};
