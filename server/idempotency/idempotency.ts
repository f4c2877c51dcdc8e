/**
 * Idempotency-Key on every POST, as Stripe does it. Placed after authentication and the
 * document's validation (a refused request keeps nothing), before the routers. A key belongs to
 * its caller (the API token), method and path: another token's key, or the same key on another
 * path, is a key of its own.
 * - a new key is claimed, the request runs, and its status and JSON body are stored before
 *   they are sent, so a retry arriving right after the answer finds them;
 * - the same key and the same request: the stored answer again, `Idempotent-Replayed: true`;
 * - the same key and another body: 422 `idempotency_key_reused`;
 * - the same key while the first still runs: 409 `idempotency_key_in_use`.
 * A 5XX answer is not kept: the claim is released and a retry runs again. Nor is a 202 (work
 * accepted, its outcome not known yet): a retry asks the service again, which answers 409 until
 * the outcome is known, then the outcome (a `processing` charge); that 409 is not kept either.
 * The scope is left in `res.locals.idempotency`, so that a service can also bind its own
 * record to it (one charge per scope and key, enforced by a unique index).
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Knex } from 'knex';
import type { SecretBox } from '../crypto/secrets';
import { tenantOf } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { idempotencyGroups, idempotencyRepo, type IdempotencyGroups } from './idempotency-repo';
import { apiCaller, requestFingerprint, type IdempotencyScope, type RequestFile } from './request-fingerprint';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';

export function idempotencyOf(res: Response): IdempotencyScope | undefined {
  return res.locals.idempotency as IdempotencyScope | undefined;
}

export function idempotency(db: Knex, secrets: SecretBox): RequestHandler {
  const keyed = keyedRequest(db, secrets, idempotencyGroups(db));
  // A request without a key (every GET, PUT and DELETE) goes on at once, with no promise made.
  return (req, res, next) => {
    const key = req.method === 'POST' ? req.get(IDEMPOTENCY_HEADER) : undefined;
    if (key === undefined) return next();
    void keyed(req, res, next, key);
  };
}

/** A POST with a key: claimed, replayed, or refused. */
function keyedRequest(db: Knex, secrets: SecretBox, groups: IdempotencyGroups) {
  const run = async (req: Request, res: Response, next: NextFunction, key: string): Promise<void> => {
    try {
      const tenant = tenantOf(res);
      const scope: IdempotencyScope = {
        caller: apiCaller(tenant.tokenId!),
        method: req.method,
        path: req.originalUrl,
        key,
        // The multipart reader (http/uploads.ts) ran before, inside the validator's chain: its files are the request's too.
        fingerprint: requestFingerprint(secrets, req.method, req.originalUrl, req.body, (req.files as RequestFile[] | undefined) ?? []),
      };
      const records = idempotencyRepo(db, tenant, secrets, scope, groups);
      const hash = scope.fingerprint;
      if (!(await records.claim(hash))) {
        const record = await records.find();
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
      res.locals.idempotency = scope;
      keepAnswer(res, records);
      next();
    } catch (error) {
      next(error);
    }
  };
  return run;
}

/** The service's own "still running" (a charge being made): not an answer to keep. */
const isKeyInUse = (body: unknown) => (body as { errorCode?: string } | null)?.errorCode === 'idempotency_key_in_use';

/** Stores the answer before it leaves; releases the key when nothing worth keeping is sent. */
function keepAnswer(res: Response, records: ReturnType<typeof idempotencyRepo>): void {
  const send = res.json.bind(res);
  let settled = false;
  res.json = (body: unknown) => {
    if (settled) return send(body);
    settled = true;
    const status = res.statusCode;
    const kept = status >= 500 || status === 202 || isKeyInUse(body) ? records.release() : records.complete(status, body);
    kept.then(
      () => send(body),
      // The answer could not be kept: forget the claim, so that a retry runs again instead of
      // meeting 409 idempotency_key_in_use for 24 hours.
      () => records.release().catch(() => undefined).then(() => send(body)),
    );
    return res;
  };
  res.on('close', () => {
    if (!settled) {
      settled = true;
      void records.release().catch(() => undefined);
    }
  });
}
