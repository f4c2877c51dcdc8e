/** Webhook test helpers: receivers on 127.0.0.1, a worker of the test's own, and the document's payload schemas. */
import { decodeEventBody } from '../../server/kernel/event-body';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Config } from '../../server/kernel/config';
import { startQueue } from '../../server/jobs/queue';
import { startWebhookWorker, type WebhookWorker, type WebhookWorkerOptions } from '../../server/webhooks/delivery-worker';
import { loadDocument } from '../../server/http/validator';
import { startTestApp, type TestApp } from './test-app';
import type { ApiClient, Schemas } from '../../client';

export interface Received {
  headers: IncomingHttpHeaders;
  /** The body exactly as it came over the wire. */
  raw: Buffer;
  body: { data: unknown };
  at: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** How the next requests are answered; default 200. */
  answer: (request: Received, response: ServerResponse, index: number) => void;
  close(): Promise<void>;
}

export async function startReceiver(answer?: Receiver['answer']): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    received: [],
    answer: answer ?? ((_request, response) => response.writeHead(200).end('ok')),
    close: async () => {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const request: Received = { headers: req.headers, raw, body: JSON.parse(raw.toString('utf8')), at: Date.now() };
      receiver.received.push(request);
      receiver.answer(request, res, receiver.received.length - 1);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

/** Waits until `check` holds (polling); fails the test with `what` when it never does. */
export async function eventually<T>(check: () => T | Promise<T>, what: string, timeoutMs = 20_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 25));
  }
}

/**
 * A delivery worker on the test's database with a queue of its own (so that stopping it is a
 * real stop), a short poll interval, and the config overrides given.
 */
export async function startTestWorker(
  app: TestApp,
  config: Partial<Config> = {},
  options: WebhookWorkerOptions = {},
): Promise<WebhookWorker> {
  const boss = await startQueue(app.databaseUrl, app.logger);
  const worker = startWebhookWorker(
    { config: { ...app.config, ...config }, db: app.db, logger: app.logger, secrets: app.secrets, boss, clock: () => app.clock.now() },
    { pollIntervalMs: 50, ...options },
  );
  await worker.ready;
  return {
    ready: worker.ready,
    stop: async () => {
      await worker.stop();
      await boss.stop({ graceful: false, wait: true });
    },
  };
}

let ajv: Ajv2020 | undefined;

/** The errors of `body` against the request body schema of webhook `event` in the document; [] when it conforms. */
export function payloadErrors(event: string, body: unknown): string[] {
  if (!ajv) {
    ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(ajv);
    ajv.addSchema(loadDocument() as object, 'openapi');
  }
  const pointer = `openapi#/webhooks/${event}/post/requestBody/content/application~1json/schema`;
  const validate = ajv.getSchema(pointer) ?? ajv.compile({ $ref: pointer });
  return validate(body) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
}

/**
 * A webhook subscribed to every event, so that the outbox keeps what the tests read (events no
 * webhook subscribes to are never written). Needs an app with `webhookAllowInsecureUrls`; no
 * worker delivers unless the test starts one.
 */
export async function subscribeToEverything(client: ApiClient): Promise<void> {
  const events = Object.keys((loadDocument() as unknown as { webhooks: object }).webhooks) as Schemas['EventName'][];
  const { response } = await client.POST('/webhooks', { body: { url: 'http://127.0.0.1:9/outbox-only', events, secret: 'outbox_only_secret_123' } });
  if (response.status !== 201) throw new Error(`could not subscribe: ${response.status}`);
}

/**
 * The payloads of the `name` events the outbox holds that `match` picks (a function, or the id
 * the payload must carry), in the order they were recorded; each must conform to the document.
 */
export async function outboxEvents(
  app: Pick<TestApp, 'db'>,
  name: string,
  match: string | ((data: Record<string, any>) => boolean), // eslint-disable-line @typescript-eslint/no-explicit-any
): Promise<Record<string, any>[]> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const picks = typeof match === 'string' ? (data: { id?: unknown }) => data.id === match : match;
  const rows = await app.db('webhook_events').where({ name }).orderBy([{ column: 'created_at' }, { column: 'id' }]);
  const found = rows.map((row) => decodeEventBody(row.body) as Record<string, any>).filter(picks); // eslint-disable-line @typescript-eslint/no-explicit-any
  for (const data of found) expect(payloadErrors(name, { data })).toEqual([]);
  return found;
}

/**
 * Receivers and delivery workers that a test starts and that stop after it (an `afterEach` of
 * the calling file): `app` is read when a worker starts, after the file's `beforeAll`.
 */
export function webhookTestKit(app: () => TestApp) {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });
  return {
    /** Something to undo after the test (a webhook to delete, a server to close). */
    after(cleanup: () => Promise<unknown>): void {
      cleanups.push(cleanup);
    },
    /** Something to undo once everything else of the test is undone (a webhook, after its worker stopped). */
    last(cleanup: () => Promise<unknown>): void {
      cleanups.unshift(cleanup);
    },
    async receiver(answer?: Receiver['answer']): Promise<Receiver> {
      const started = await startReceiver(answer);
      cleanups.push(() => started.close());
      return started;
    },
    async worker(config: Partial<Config> = {}, options: WebhookWorkerOptions = {}): Promise<WebhookWorker> {
      const started = await startTestWorker(app(), config, options);
      cleanups.push(() => started.stop());
      return started;
    },
    /** A webhook for `location.create` to `url`, signed with `secret` (or one generated); deleted once the rest of the test is undone. */
    async locationWebhook(url: string, secret?: string) {
      const { data, error, response } = await app().api.POST('/webhooks', { body: { url, events: ['location.create'], ...(secret ? { secret } : {}) } });
      if (!data) throw new Error(JSON.stringify(error));
      expect(response.status).toBe(201);
      cleanups.unshift(() => app().api.DELETE('/webhooks/{id}', { params: { path: { id: data.data.id } } }));
      return data.data;
    },
  };
}

/**
 * A test app whose sandbox organization is subscribed to every event (webhooks to http://
 * allowed, for the tests' own receivers): what most files that check events start with.
 */
export async function subscribedSandbox(): Promise<{ app: TestApp; api: ApiClient }> {
  const app = await startTestApp({ webhookAllowInsecureUrls: true });
  await subscribeToEverything(app.sandbox);
  return { app, api: app.sandbox };
}

/** A delivered payload's data, read loosely (tests pick their fields). */
export type DeliveredData = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The data of the delivery of `event` to `receiver` that `match` picks, once it arrives; its body must conform to the document. */
export async function deliveredData(receiver: Receiver, event: string, match: (data: DeliveredData) => boolean): Promise<DeliveredData> {
  const hit = await eventually(() => receiver.received.find((r) => r.headers['x-service-event-name'] === event && match(r.body.data as DeliveredData)), event);
  expect(payloadErrors(event, hit.body)).toEqual([]);
  return hit.body.data as DeliveredData;
}
