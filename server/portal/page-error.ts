/**
 * What stops a Portal request before its page: the answer a browser gets (a page with a
 * status, or a redirect) and the one the Portal API gets (the spec's error body).
 */
import type { ErrorCode } from '../kernel/errors';

/** A way forward on a page: every Portal page has at least one. */
export interface PageLink {
  href: string;
  text: string;
}

export class PortalStop extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: ErrorCode,
    readonly title: string,
    message: string,
    /** A page sends the browser here instead (303); the API answers the status. */
    readonly redirect?: string,
    /** Where the person can go instead: one link, or several side by side. */
    readonly link?: PageLink | PageLink[],
  ) {
    super(message);
  }
}
