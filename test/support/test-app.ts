/**
 * One running service per test file: its own database cloned from the migrated template, the
 * app in-process on a random port, and generated clients for three tenants.
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import type { Knex } from 'knex';
import type { Tenant } from '../../server/kernel/tenant';
import { createApiClient, type ApiClient } from '../../client';
import { API_BASE, createApp, listen } from '../../server/app';
import type { AppDeps } from '../../server/deps';
import { loadConfig, type Config } from '../../server/kernel/config';
import { SecretBox } from '../../server/crypto/secrets';
import { connect } from '../../server/db/database';
import { startQueue, type Boss } from '../../server/jobs/queue';
import { startWorkers, type Workers } from '../../server/workers';
import { createLogger } from '../../server/kernel/logging';
import type { Logger } from 'pino';
import { createOrganization, type CreatedOrganization } from '../../server/organizations/organization-repo';
import { webhookEvents } from '../../server/webhooks/outbox';
import { diskFileStore } from '../../server/files/disk-file-store';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The app's clock, frozen at the start of the file until a test moves it. */
export interface TestClock {
  now(): Date;
  set(time: Date): void;
  advance(ms: number): void;
}

export function frozenClock(start = new Date()): TestClock {
  let time = start.getTime();
  return {
    now: () => new Date(time),
    set: (next) => {
      time = next.getTime();
    },
    advance: (ms) => {
      time += ms;
    },
  };
}

export interface TestApp {
  baseUrl: string;
  /** What the app was built from: for starting workers or calling services directly. */
  deps: AppDeps;
  /** The server's own address (no path): the Portal entry and short links live beside /api/v1. */
  origin: string;
  clock: TestClock;
  db: Knex;
  boss: Boss;
  databaseUrl: string;
  config: Config;
  /** The app's data key and logger, for workers started by a test. */
  secrets: SecretBox;
  logger: Logger;
  /** Production token of the first organization. */
  api: ApiClient;
  /** Sandbox token of the same organization. */
  sandbox: ApiClient;
  /** Production token of a second organization. */
  other: ApiClient;
  organization: CreatedOrganization;
  /** Every log line written so far, as text. */
  logs: string[];
  clientFor(token: string): ApiClient;
  /** Starts the background workers, as `npm start` does; stop() stops them first. */
  startWorkers(): Promise<Workers>;
  stop(): Promise<void>;
}

export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const adminUrl = process.env.TEST_ADMIN_DATABASE_URL!;
  const template = process.env.TEST_TEMPLATE_DATABASE!;
  const name = `${template}_${randomBytes(4).toString('hex')}`;
  const admin = connect(adminUrl, 1);
  await admin.raw(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  await admin.destroy();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const again = connect(adminUrl, 1);
      await again.raw(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await again.destroy();
    },
  };
}

export async function startTestApp(overrides: Partial<Config> = {}): Promise<TestApp> {
  const database = await createTestDatabase();
  const db = connect(database.url);
  // A high limit by default, so that only the rate-limit tests meet it. Portal passwords hashed
  // at scrypt's N=2^12 (about 20 ms of CPU) instead of production's 2^17 (about a second, and
  // 128 MiB): each hash keeps its own parameters, and portal-accounts.test.ts asserts
  // production's cost.
  const config: Config = { ...loadConfig({ PORT: '0' }), databaseUrl: database.url, logLevel: 'debug', rateLimitPerMinute: 100_000, passwordScryptLog2N: 12, ...overrides };
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  const logger = createLogger(config.logLevel, sink);
  const boss = await startQueue(database.url, logger);
  const secrets = new SecretBox(randomBytes(32));
  const clock = frozenClock();
  const deps: AppDeps = { config, db, logger, secrets, boss, clock: () => clock.now(), events: webhookEvents(boss, () => clock.now()), files: diskFileStore(mkdtempSync(join(tmpdir(), 'dcs-files-'))) };
  const app = createApp(deps);
  const server: Server = await listen(app, 0, '127.0.0.1');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const origin = `http://127.0.0.1:${port}`;
  const baseUrl = `${origin}${API_BASE}`;
  // The port is known only now: links point at this server (the app reads both per request;
  // it mounted their paths, which do not change, when it was made).
  if (!overrides.portalUrl) config.portalUrl = `${origin}/portal`;
  if (!overrides.shortLinkBaseUrl) config.shortLinkBaseUrl = `${origin}/s`;
  const organization = await createOrganization(db, 'Acme Recovery LLC', 'ops@acme-recovery.example');
  const second = await createOrganization(db, 'Northwind Credit', 'ops@northwind.example');
  const clientFor = (token: string) => createApiClient({ baseUrl, token });
  const started: Workers[] = [];
  return {
    baseUrl,
    deps,
    origin,
    clock,
    db,
    boss,
    databaseUrl: database.url,
    config,
    secrets,
    logger,
    api: clientFor(organization.production_token),
    sandbox: clientFor(organization.sandbox_token),
    other: clientFor(second.production_token),
    organization,
    logs,
    clientFor,
    startWorkers: async () => {
      const workers = await startWorkers(deps);
      started.push(workers);
      return workers;
    },
    stop: async () => {
      for (const workers of started) await workers.stop();
      await new Promise<void>((done) => server.close(() => done()));
      server.closeAllConnections();
      // As the server stops: jobs in hand finish first, then the pool closes.
      await boss.stop({ graceful: true, wait: true, timeout: 10_000 });
      await db.destroy();
      await database.drop();
    },
  };
}

/** The sandbox tenant of a test app's organization, as the services take it (no token: the test is not a request). */
export const sandboxTenantOf = (app: TestApp): Tenant => ({ organizationId: app.organization.organization_id, environment: 'sandbox', tokenHash: '' });

/** After each test, the sandbox gateway of `app` answers at once again, within the usual wait, and loses no answer (what a test of a slow gateway changes). */
export function restoreGatewayAfterEach(app: () => TestApp | undefined): void {
  afterEach(() => {
    const config = app()?.config;
    if (!config) return;
    config.sandboxGatewayLatencyMs = 0;
    config.gatewayAnswerWaitMs = 10_000;
    config.testSandboxLoseAnswerCents = undefined;
  });
}

/** A second server process's app over the same database as `app` (as operators run several), listening; its API's base URL and how to close it. */
export async function startSecondServer(app: TestApp): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const server = await listen(
    createApp({ config: app.config, db: app.db, logger: createLogger('silent'), secrets: new SecretBox(randomBytes(32)), boss: app.boss, clock: () => new Date(), events: app.deps.events, files: app.deps.files }),
    0,
    '127.0.0.1',
  );
  const address = server.address();
  return {
    baseUrl: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}${API_BASE}`,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}
