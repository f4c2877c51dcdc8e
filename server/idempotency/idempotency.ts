/**
 * Idempotency-Key on every POST, as Stripe does it. Placed after authentication and the
 * document's validation (a refused request keeps nothing), before the routers:
 * - a new key is claimed, the request runs, and its status and JSON body are stored before
 *   they are sent, so a retry arriving right after the answer finds them;
 * - the same key and the same request: the stored answer again, `Idempotent-Replayed: true`;
 * - the same key and another request: 422 `idempotency_key_reused`;
 * - the same key while the first still runs: 409 `idempotency_key_in_use`.
 * A 5XX answer is not kept: the claim is released and a retry runs again.
 * The key is left in `res.locals.idempotencyKey`, so that a service can also bind its own
 * record to it (one charge per key, enforced by a unique index).
 */
import { createHash } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Knex } from 'knex';
import { tenantOf } from '../http/auth';
import { ApiError } from '../http/errors';
import { idempotencyRepo, pruneExpiredKeys } from './idempotency-repo';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** Same method, path and body, whatever the order of the body's keys. */
export function requestHash(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method} ${path}\n${canonical(body)}`).digest('hex');
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export function idempotencyKeyOf(res: Response): string | undefined {
  return res.locals.idempotencyKey as string | undefined;
}

export function idempotency(db: Knex): RequestHandler {
  const keyed = keyedRequest(db);
  // A request without a key (every GET, PUT and DELETE) goes on at once, with no promise made.
  return (req, res, next) => {
    const key = req.method === 'POST' ? req.get(IDEMPOTENCY_HEADER) : undefined;
    if (key === undefined) return next();
    void keyed(req, res, next, key);
  };
}

/** A POST with a key: claimed, replayed, or refused. */
function keyedRequest(db: Knex) {
  const run = async (req: Request, res: Response, next: NextFunction, key: string): Promise<void> => {
    try {
      const tenant = tenantOf(res);
      const records = idempotencyRepo(db, tenant);
      const hash = requestHash(req.method, req.originalUrl, req.body);
      await pruneExpiredKeys(db);
      if (!(await records.claim(key, req.method, req.originalUrl, hash))) {
        const record = await records.find(key);
        // Gone between the two statements (released, or pruned): this request is a new one.
        if (!record) return run(req, res, next, key);
        if (record.request_hash !== hash) {
          throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was already used with another request.', {
            'headers.idempotency-key': ['was already used with another request in the last 24 hours'],
          });
        }
        if (record.status === 'running') {
          throw new ApiError('idempotency_key_in_use', 'A request with this Idempotency-Key is still running; retry later.');
        }
        res.set(REPLAYED_HEADER, 'true').status(record.response_status!).json(record.response_body);
        return;
      }
      res.locals.idempotencyKey = key;
      keepAnswer(res, records, key);
      next();
    } catch (error) {
      next(error);
    }
  };
  return run;
}

/** Stores the answer before it leaves; releases the key when nothing worth keeping is sent. */
function keepAnswer(res: Response, records: ReturnType<typeof idempotencyRepo>, key: string): void {
  const send = res.json.bind(res);
  let settled = false;
  res.json = (body: unknown) => {
    if (settled) return send(body);
    settled = true;
    const status = res.statusCode;
    const kept = status >= 500 ? records.release(key) : records.complete(key, status, body);
    kept.then(
      () => send(body),
      // The answer could not be kept: forget the claim, so that a retry runs again instead of
      // meeting 409 idempotency_key_in_use for 24 hours.
      () => records.release(key).catch(() => undefined).then(() => send(body)),
    );
    return res;
  };
  res.on('close', () => {
    if (!settled) {
      settled = true;
      void records.release(key).catch(() => undefined);
    }
  });
}
