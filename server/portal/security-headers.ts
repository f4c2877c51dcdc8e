/**
 * The headers of every Portal response. Pages load nothing but our own stylesheet and post
 * only to us, so the Content-Security-Policy allows exactly that; no script runs at all.
 * `Referrer-Policy: no-referrer` keeps any address (a link's token before the redirect drops
 * it, an account id) out of the Referer of a link the customer follows.
 */
import type { RequestHandler } from 'express';

const CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export function securityHeaders(https: boolean): RequestHandler {
  return (_req, res, next) => {
    res.set({
      'Content-Security-Policy': CSP,
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'no-referrer',
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Resource-Policy': 'same-origin',
      'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=()',
      // Balances and card forms must not be kept by the browser or a proxy.
      'Cache-Control': 'no-store',
      ...(https ? { 'Strict-Transport-Security': 'max-age=31536000' } : {}),
    });
    next();
  };
}
