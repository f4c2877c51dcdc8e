/**
 * `POST /api/v1/processor-webhooks/{id}`: called by a processor, not by integrators, so it is
 * served ahead of the bearer-token API, with the body read raw (its signature covers the bytes
 * as sent). Answers 200 `{received: true}`, 400 for a bad signature, 404 for an unknown id.
 */
import express, { type RequestHandler } from 'express';
import type { AppDeps } from '../deps';
import { receiveNotice } from './notice-service';

const BODY_LIMIT = '1mb';

export function processorNoticeRoute(deps: AppDeps): RequestHandler[] {
  return [
    express.raw({ type: () => true, limit: BODY_LIMIT }),
    async (req, res, next) => {
      try {
        const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        await receiveNotice(deps, String(req.params.id), body, req.headers);
        res.json({ received: true });
      } catch (error) {
        next(error);
      }
    },
  ];
}
