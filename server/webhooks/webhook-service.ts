/**
 * The rules of the webhook operations that a schema cannot state: a URL that is https and
 * points outside our network (unless the operator allows insecure URLs), unique per tenant;
 * a secret stored sealed (generated when none is given, a `whsec_` one well formed); rotation
 * with a grace period; test deliveries through the normal signed delivery path.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Config } from '../kernel/config';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { listPage, type Listed } from '../http/listing';
import type { PageRequest } from '../http/pagination';
import { isUniqueViolation } from '../db/tenant';
import { enqueueManyIn } from '../jobs/queue';
import type PgBoss from 'pg-boss';
import { deliveryJob } from './delivery-jobs';
import { testPayload } from './test-payloads';
import { generateSecret, secretProblem } from './signing';
import { webhookUrlProblem } from './url-safety';
import { deliveryToApi, webhookToApi } from './webhook-mapper';
import {
  DELIVERIES,
  DELIVERY_COLUMNS,
  WEBHOOK_COLUMNS,
  WEBHOOK_URL_UNIQUE,
  WEBHOOKS,
  webhookRepo,
  type DeliveryRow,
  type EventName,
  type WebhookChanges,
  type WebhookRow,
} from './webhook-repo';

type S = components['schemas'];

export type WebhookDeps = Pick<AppDeps, 'db' | 'boss' | 'config' | 'secrets' | 'clock'>;

const HOUR_MS = 3_600_000;
export const DISABLED_BY_HAND = 'Disabled with PUT /webhooks/{id}.';

function checkSecret(secret: string): void {
  const problem = secretProblem(secret);
  if (problem) throw ApiError.field('secret', problem);
}

const TAKEN = 'has already been taken';

async function checkUrl(config: Config, url: string): Promise<void> {
  const problem = await webhookUrlProblem(url, config.webhookAllowInsecureUrls);
  if (problem) throw ApiError.field('url', problem);
}

/** Two writers racing for one url: the unique index decides, the loser gets a 422. */
async function urlUnique<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isUniqueViolation(error, WEBHOOK_URL_UNIQUE)) throw ApiError.field('url', TAKEN);
    throw error;
  }
}

async function found(db: Knex, tenant: Tenant, id: string): Promise<WebhookRow> {
  const row = await webhookRepo(db, tenant).find(id);
  if (!row) throw ApiError.notFound('Webhook');
  return row;
}

/** One page of the tenant's webhooks, oldest first. */
async function list({ db }: WebhookDeps, tenant: Tenant, page: PageRequest): Promise<Listed<S['Webhook']>> {
  return listPage<WebhookRow, S['Webhook']>(webhookRepo(db, tenant).query(), page, { columns: WEBHOOK_COLUMNS, table: WEBHOOKS }, (rows) => rows.map(webhookToApi));
}

async function find({ db }: WebhookDeps, tenant: Tenant, id: string): Promise<S['Webhook']> {
  return webhookToApi(await found(db, tenant, id));
}

/** A webhook; with its secret when the service made it up (shown this once). */
async function create({ db, config, secrets }: WebhookDeps, tenant: Tenant, body: S['WebhookCreate']): Promise<S['WebhookCreated']> {
  await checkUrl(config, body.url);
  if (body.secret !== undefined) checkSecret(body.secret);
  const repo = webhookRepo(db, tenant);
  if (await repo.urlTaken(body.url)) throw ApiError.field('url', TAKEN);
  const generated = body.secret === undefined ? generateSecret() : undefined;
  const row = await urlUnique(() => repo.insert({ url: body.url, events: body.events, secret_sealed: secrets.encrypt(body.secret ?? generated!) }));
  return generated ? { ...webhookToApi(row), secret: generated } : webhookToApi(row);
}

/** What a PUT's `status` changes: enabling clears the failure record; disabling says it was by hand. */
function statusChanges(row: WebhookRow, status: S['WebhookStatus'] | undefined, now: Date): WebhookChanges {
  if (!status || status === row.status) return {};
  if (status === 'enabled') return { status, disabled_reason: null, disabled_at: null, failing_since: null, warned_at: null };
  return { status, disabled_reason: DISABLED_BY_HAND, disabled_at: now, failing_since: null, warned_at: null };
}

async function update({ db, config, secrets, clock }: WebhookDeps, tenant: Tenant, id: string, body: S['WebhookUpdate']): Promise<S['Webhook']> {
  const row = await found(db, tenant, id);
  await checkUrl(config, body.url);
  if (body.secret !== undefined) checkSecret(body.secret);
  const repo = webhookRepo(db, tenant);
  if (await repo.urlTaken(body.url, id)) throw ApiError.field('url', TAKEN);
  const changes: WebhookChanges = {
    url: body.url,
    ...(body.events ? { events: body.events } : {}),
    // A new secret signs alone, at once: a rotation's old secret is forgotten with it.
    ...(body.secret !== undefined ? { secret_sealed: secrets.encrypt(body.secret), previous_secret_sealed: null, previous_secret_expires_at: null } : {}),
    ...statusChanges(row, body.status, clock()),
  };
  return urlUnique(async () => webhookToApi(await repo.update(id, changes)));
}

/**
 * A new secret (given or generated), answered once; the one in use until now keeps signing
 * beside it for the grace period. A rotation within the grace of another replaces the old
 * secret pending expiry: the one before it is forgotten at once.
 */
async function rotateSecret({ db, secrets, config, clock }: WebhookDeps, tenant: Tenant, id: string, body: S['WebhookSecretRotation']): Promise<S['WebhookSecretRotated']> {
  if (body.secret !== undefined) checkSecret(body.secret);
  const secret = body.secret ?? generateSecret();
  return db.transaction(async (trx) => {
    const repo = webhookRepo(trx, tenant);
    const row = await repo.find(id, { forUpdate: true });
    if (!row) throw ApiError.notFound('Webhook');
    const now = clock();
    const expires = new Date(now.getTime() + config.webhookSecretGraceHours * HOUR_MS);
    const updated = await repo.update(id, {
      secret_sealed: secrets.encrypt(secret),
      previous_secret_sealed: row.secret_sealed,
      previous_secret_expires_at: expires,
      secret_rotated_at: now,
    });
    return { ...webhookToApi(updated), secret, previous_secret_expires_at: expires.toISOString() };
  });
}

/** Its delivery rows go with it (cascade); their queued attempts then find nothing to send. */
async function remove({ db }: WebhookDeps, tenant: Tenant, id: string): Promise<void> {
  await found(db, tenant, id);
  await webhookRepo(db, tenant).delete(id);
}

/**
 * Test deliveries to every webhook of the tenant, or to one. Each subscribed, requested event
 * goes to each webhook as one job that carries its generated data; nothing else is written.
 */
async function trigger({ db, boss }: WebhookDeps, tenant: Tenant, events: EventName[], webhookId?: string): Promise<S['WebhookTriggerResult']> {
  const hooks = webhookId ? [await found(db, tenant, webhookId)] : await webhookRepo(db, tenant).list();
  const dispatched: Record<string, EventName[]> = {};
  const sent = new Set<EventName>();
  const jobs: PgBoss.JobInsert[] = [];
  for (const hook of hooks) {
    const subscribed = events.filter((event) => hook.events.includes(event));
    if (subscribed.length === 0) continue;
    dispatched[hook.url] = subscribed;
    for (const event of subscribed) {
      sent.add(event);
      jobs.push(deliveryJob({ test: { webhookId: hook.id, event, data: testPayload(event) }, attempt: 1 }));
    }
  }
  if (jobs.length > 0) await db.transaction((trx) => enqueueManyIn(boss, trx, jobs));
  return { dispatched, not_dispatched: events.filter((event) => !sent.has(event)) };
}

async function redeliver({ db, boss }: WebhookDeps, tenant: Tenant, webhookId: string, deliveryId: string): Promise<S['WebhookDelivery']> {
  return db.transaction(async (trx) => {
    const repo = webhookRepo(trx, tenant);
    if (!(await repo.find(webhookId))) throw ApiError.notFound('Webhook');
    const delivery = await repo.findDelivery(webhookId, deliveryId, { forUpdate: true });
    if (!delivery) throw ApiError.notFound('Delivery');
    if (!delivery.delivered_at && !delivery.failed_at) throw ApiError.conflict('This delivery is still pending; its attempts are under way.');
    await repo.restartDelivery(delivery.id);
    await enqueueManyIn(boss, trx, [deliveryJob({ deliveryId: delivery.id, attempt: 1, webhookId })]);
    return deliveryToApi((await repo.findDelivery(webhookId, deliveryId))!);
  });
}

/** A webhook's deliveries, newest first. */
async function deliveries({ db }: WebhookDeps, tenant: Tenant, webhookId: string, page: PageRequest): Promise<Listed<S['WebhookDelivery']>> {
  const repo = webhookRepo(db, tenant);
  await found(db, tenant, webhookId);
  return listPage<DeliveryRow, S['WebhookDelivery']>(repo.deliveries(webhookId), page, { columns: DELIVERY_COLUMNS, table: DELIVERIES, order: 'desc' }, (rows) =>
    rows.map(deliveryToApi),
  );
}

export function webhookService(deps: WebhookDeps) {
  return {
    list: (tenant: Tenant, page: PageRequest) => list(deps, tenant, page),
    find: (tenant: Tenant, id: string) => find(deps, tenant, id),
    create: (tenant: Tenant, body: S['WebhookCreate']) => create(deps, tenant, body),
    update: (tenant: Tenant, id: string, body: S['WebhookUpdate']) => update(deps, tenant, id, body),
    rotateSecret: (tenant: Tenant, id: string, body: S['WebhookSecretRotation']) => rotateSecret(deps, tenant, id, body),
    remove: (tenant: Tenant, id: string) => remove(deps, tenant, id),
    trigger: (tenant: Tenant, events: EventName[], webhookId?: string) => trigger(deps, tenant, events, webhookId),
    deliveries: (tenant: Tenant, webhookId: string, page: PageRequest) => deliveries(deps, tenant, webhookId, page),
    redeliver: (tenant: Tenant, webhookId: string, deliveryId: string) => redeliver(deps, tenant, webhookId, deliveryId),
  };
}
