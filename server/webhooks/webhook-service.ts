/**
 * The rules of the webhook operations that a schema cannot state: a URL that is https and
 * points outside our network (unless the operator allows insecure URLs), unique per tenant;
 * a secret stored sealed; test deliveries through the normal signed delivery path.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Config } from '../config';
import type { AppDeps } from '../deps';
import type { Tenant } from '../http/auth';
import { ApiError } from '../http/errors';
import { listPage, type Listed } from '../http/listing';
import type { PageRequest } from '../http/pagination';
import { isUniqueViolation } from '../db/tenant';
import { enqueueManyIn } from '../jobs/queue';
import type PgBoss from 'pg-boss';
import { deliveryJob } from './delivery-jobs';
import { testPayload } from './test-payloads';
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
  type WebhookRow,
} from './webhook-repo';

type S = components['schemas'];

export type WebhookDeps = Pick<AppDeps, 'db' | 'boss' | 'config' | 'secrets'>;

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

async function create({ db, config, secrets }: WebhookDeps, tenant: Tenant, body: S['WebhookCreate']): Promise<S['Webhook']> {
  await checkUrl(config, body.url);
  const repo = webhookRepo(db, tenant);
  if (await repo.urlTaken(body.url)) throw ApiError.field('url', TAKEN);
  return urlUnique(async () => webhookToApi(await repo.insert({ url: body.url, events: body.events, secret_sealed: secrets.encrypt(body.secret) })));
}

async function update({ db, config, secrets }: WebhookDeps, tenant: Tenant, id: string, body: S['WebhookUpdate']): Promise<S['Webhook']> {
  await found(db, tenant, id);
  await checkUrl(config, body.url);
  const repo = webhookRepo(db, tenant);
  if (await repo.urlTaken(body.url, id)) throw ApiError.field('url', TAKEN);
  const changes = { url: body.url, secret_sealed: secrets.encrypt(body.secret), ...(body.events ? { events: body.events } : {}) };
  return urlUnique(async () => webhookToApi(await repo.update(id, changes)));
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
    await enqueueManyIn(boss, trx, [deliveryJob({ deliveryId: delivery.id, attempt: 1 })]);
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
    remove: (tenant: Tenant, id: string) => remove(deps, tenant, id),
    trigger: (tenant: Tenant, events: EventName[], webhookId?: string) => trigger(deps, tenant, events, webhookId),
    deliveries: (tenant: Tenant, webhookId: string, page: PageRequest) => deliveries(deps, tenant, webhookId, page),
    redeliver: (tenant: Tenant, webhookId: string, deliveryId: string) => redeliver(deps, tenant, webhookId, deliveryId),
  };
}
