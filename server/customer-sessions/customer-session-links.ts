/**
 * What a session link looks like: the token, the short code, the Portal path of each
 * destination, and the whole portal_url and short_url. The layout is the document's
 * (CustomerSession.portal_url); the Portal entry routes read it back with pagePath.
 */
import { randomBytes } from 'node:crypto';
import type { components } from '../../generated/schema';
import type { Config } from '../kernel/config';

type Destination = components['schemas']['SessionDestination'];
export type SessionTag = components['schemas']['SessionTag'];

/** 32 random bytes, base64url: 43 characters, 256 bits. */
const TOKEN_LENGTH = 43;
export function newCustomerSessionToken(): string {
  return randomBytes(32).toString('base64url');
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const SHORT_CODE_LENGTH = 12;
// The largest multiple of 62 below 256: bytes from here up are dropped, so every letter is
// equally likely (12 of 62 letters: about 71 bits).
const UNBIASED_BELOW = 256 - (256 % ALPHABET.length);

export function newShortCode(): string {
  let code = '';
  while (code.length < SHORT_CODE_LENGTH) {
    for (const byte of randomBytes(SHORT_CODE_LENGTH)) {
      if (byte < UNBIASED_BELOW && code.length < SHORT_CODE_LENGTH) code += ALPHABET[byte % ALPHABET.length];
    }
  }
  return code;
}

export interface LinkTarget {
  destination: Destination;
  debt_account_id: string | null;
  debt_account_dispute_id: string | null;
}

/** The page of a destination, after `/s/<token>`. */
export function pagePath({ destination, debt_account_id: account, debt_account_dispute_id: dispute }: LinkTarget): string {
  switch (destination) {
    case 'accounts_list':
      return '/accounts';
    case 'account_detail':
      return `/accounts/${account}`;
    case 'account_checkout':
      return `/accounts/${account}/checkout`;
    case 'account_documents':
      return `/accounts/${account}/documents`;
    case 'account_disputes_detail':
      return `/disputes/${dispute}`;
  }
}

/**
 * PORTAL_URL + `/s/<token>` + the page, then `utm_source` (the organization) and the tags in
 * request order, form-encoded by URLSearchParams so that any URL parser reads them back as given.
 */
export function portalUrl(portalBase: string, token: string, target: LinkTarget, organizationId: string, tags: SessionTag[]): string {
  const query = new URLSearchParams([['utm_source', organizationId], ...tags.map((tag): [string, string] => [tag.name, tag.value])]);
  return `${portalBase}/s/${token}${pagePath(target)}?${query.toString()}`;
}

/** The document's maxLength of `portal_url` (and of every other link of a session). */
export const PORTAL_URL_MAX_LENGTH = 2048;

/**
 * The length `portal_url` would have: tags of 255 characters, each percent-encoded to up to
 * 9, could make it several times the document's limit, so a request is measured (and refused)
 * before anything is saved. The token's length is fixed, so any token measures the same.
 */
export function portalUrlLength(portalBase: string, target: LinkTarget, organizationId: string, tags: SessionTag[]): number {
  return portalUrl(portalBase, 'x'.repeat(TOKEN_LENGTH), target, organizationId, tags).length;
}

export function shortUrl(shortLinkBase: string, code: string): string {
  return `${shortLinkBase}/${code}`;
}

/** The path part of a configured base URL, where this server mounts its routes ('' for none). */
export function mountPath(base: string): string {
  return new URL(base).pathname.replace(/\/+$/, '');
}

/**
 * The path of a request as logged: the credential of a session link (the token of a Portal
 * entry, the code of a short link) replaced by `[redacted]`.
 */
export function redactLinkCredentials(config: Pick<Config, 'portalUrl' | 'shortLinkBaseUrl'>): (url: string) => string {
  const prefixes = [`${mountPath(config.portalUrl)}/s/`, `${mountPath(config.shortLinkBaseUrl)}/`];
  return (url) => {
    const path = url.split('?')[0]!;
    const prefix = prefixes.find((start) => path.startsWith(start) && path.length > start.length);
    return prefix ? `${prefix}[redacted]${path.slice(prefix.length).replace(/^[^/]*/, '')}` : path;
  };
}
