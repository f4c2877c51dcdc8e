/**
 * What stops a Portal request before its page: the answer a browser gets (a page with a
 * status, or a redirect) and the one the Portal API gets (the spec's error body).
 */
import type { ErrorCode } from '../kernel/errors';

export class PortalStop extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: ErrorCode,
    readonly title: string,
    message: string,
    /** A page sends the browser here instead (303); the API answers the status. */
    readonly redirect?: string,
    readonly link?: { href: string; text: string },
  ) {
    super(message);
  }
}
