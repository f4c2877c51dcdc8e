/**
 * `POST /api/v1/processor-webhooks/{id}`: called by a processor, not by integrators, so it is
 * served ahead of the bearer-token API, with the body read raw (its signature covers the bytes
 * as sent). Answers 200 `{received: true}`, 400 for a bad signature, 404 for an unknown id,
 * 415 for a body that is not JSON, 422 for a query parameter.
 */
import express, { type RequestHandler } from 'express';
import type { AppDeps } from '../deps';
import { ApiError } from '../kernel/errors';
import { receiveNotice } from './notice-service';

const BODY_LIMIT = '1mb';

export function processorNoticeRoute(deps: AppDeps): RequestHandler[] {
  return [
    express.raw({ type: () => true, limit: BODY_LIMIT }),
    async (req, res, next) => {
      try {
        // What processors send: JSON, and no query string.
        if (!/^\s*application\/json\s*(?:;|$)/i.test(String(req.headers['content-type'] ?? ''))) throw new ApiError('unsupported_media_type', 'The body must be application/json.');
        const query = Object.keys(req.query ?? {});
        if (query.length > 0) throw ApiError.invalid(Object.fromEntries(query.map((name) => [`query.${name}`, ['is not a parameter of this operation']])));
        const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        await receiveNotice(deps, String(req.params.id), body, req.headers);
        res.json({ received: true });
      } catch (error) {
        next(error);
      }
    },
  ];
}
