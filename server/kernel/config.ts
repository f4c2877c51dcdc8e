/**
 * The operating interface: every environment variable the server reads, in one place.
 * README's table lists the same names.
 */
import { resolve } from 'node:path';

export interface Config {
  port: number;
  /** Server processes on the port (node:cluster); 1: this process serves alone. */
  webConcurrency: number;
  /** postgres://… ; unset: an embedded PostgreSQL under dataDir. */
  databaseUrl: string | undefined;
  /** How long `npm start` waits for a database that does not answer yet. */
  databaseWaitSeconds: number;
  /** Whether the statements run again and again are named prepared statements (db/prepared-statements.ts). */
  databasePreparedStatements: boolean;
  /** Connections this process's pool may open (SERVER_POOL unless set); pg-boss keeps its own few beside it. */
  databasePoolMax: number;
  dataDir: string;
  rateLimitPerMinute: number;
  /** POST /bulk/customer-sessions, per token, besides rateLimitPerMinute. */
  bulkSessionRateLimitPerMinute: number;
  /** Rows of a bulk action the import writes per transaction (POST /bulk takes up to 1000). */
  bulkChunkRows: number;
  webhookRetryDelaySeconds: number;
  webhookTimeoutMs: number;
  /** Beyond the timeout, how long a fetched attempt stays its worker's (the lease); shortened by tests. */
  webhookLeaseMarginSeconds: number;
  webhookAllowInsecureUrls: boolean;
  /** Days an event and its finished deliveries stay in the outbox (and the deliveries log). */
  webhookLogRetentionDays: number;
  /** Days every event is kept for GET /events and recovery (and its deliveries with it). */
  eventRetentionDays: number;
  /** The most bytes of JSON one GET /events answer holds (an event larger alone is sent alone). */
  eventsPageMaxBytes: number;
  /** Hours a rotated-out webhook secret keeps signing beside the new one. */
  webhookSecretGraceHours: number;
  /** Days of nothing but failed attempts after which a webhook is disabled (warned a day before). */
  webhookDisableAfterDays: number;
  portalUrl: string;
  shortLinkBaseUrl: string;
  /** base64 of 32 bytes; unset: a key kept in dataDir, made on first start. */
  dataEncryptionKey: string | undefined;
  logLevel: string;
  /** Whether GET /metrics is served and requests, charges, deliveries and messages are counted. */
  metricsEnabled: boolean;
  /** The bearer token GET /metrics asks for; unset: /metrics is open (keep it off the public network). */
  metricsToken: string | undefined;
  /** smtp(s)://user:pass@host:port for e-mail; unset: messages are written to the log instead. */
  smtpUrl: string | undefined;
  mailFrom: string;
  /**
   * Demos only: `sandbox` lets production organizations without a processor of their own use the
   * simulator. Unset: production moves no money until `PUT /payment-processor` configures one.
   */
  paymentGateway: 'sandbox' | undefined;
  /** The service's own absolute URL (no path): what `webhook_url` is built on for processors to call. */
  publicUrl: string;
  /** Stripe's API (its own host by default); tests and staging point it at a local server. */
  stripeApiUrl: string;
  /** Authorize.net's API (its production host by default; its sandbox host for the sandbox environment). */
  authorizeNetApiUrl: string;
  /** How long one request to a processor may take before it counts as unanswered (the SDK's own timeout). */
  processorTimeoutMs: number;
  /** How long a sandbox ACH debit stays pending before it settles or is returned. */
  sandboxAchSettlementSeconds: number;
  /** The simulator's median answer time (each answer drawn around it), as a real processor's. */
  sandboxGatewayLatencyMs: number;
  /** How long a request waits for the gateway's answer before it answers 202 with the charge `processing`. */
  gatewayAnswerWaitMs: number;
  /** A charge still `processing` this long after it was reserved is finished by recovery (asked with find()). */
  chargeRecoveryAfterSeconds: number;
  /** Charges the due-work job has in flight at once in one process. */
  dueWorkChargesInFlight: number;
  /**
   * scrypt's cost (log2 of N) for the Portal's new password hashes: OWASP's 17 (128 MiB, about a
   * second of CPU), never read from the environment. Tests lower it (test/support/test-app.ts):
   * each hash stores its own parameters, so a sign-in checks it at the cost it was made with.
   */
  passwordScryptLog2N: number;
  /** Test only: the simulator makes a charge of exactly this many cents and loses its answer. */
  testSandboxLoseAnswerCents: number | undefined;
  /** Test only: the process pauses (and says so on stderr) or dies at these steps of a charge (of these amounts, when given). */
  testChargeSteps: { step: string; action: 'pause' | 'die'; cents?: number }[];
}

export class ConfigError extends Error {}

/**
 * The connections a server process's pool may open, unless DATABASE_POOL_MAX says otherwise.
 * Money's work alone can hold up to 13 at once: the transactions that reserve and record charges
 * and start instalments (WRITE_SLOTS, 6), and beside them two batches each of the sandbox
 * gateway's claims, of the idempotency keys' claims and of their answers, and the statement that
 * authenticates and counts requests. A pool of 10 could be all theirs, and the reads of
 * GET /debt-accounts/{id} then waited behind their batches for a connection (bench:charges, 100
 * charges at once, 5 interleaved pairs: 10-16 ms on average against 1-4 at 20, read_p99_ratio
 * median 3.94 against 2.93, the reads served meanwhile a quarter more, charges/s the same: median
 * 75 against 74). At 20 the reads and the jobs keep 7 beyond them.
 *
 * The pool opens connections as they are needed and closes those idle for 30 s: a quiet process
 * holds few. Every process over one PostgreSQL may open this many plus its job queue's 4
 * (jobs/queue.ts), so WEB_CONCURRENCY times both must fit the database's max_connections less
 * those kept for superusers (PostgreSQL's defaults, 100 and 3: 4 processes at 20); the start warns
 * when they do not (db/connection-budget.ts). The least is 10, the smallest pool the service has
 * run and been tested on.
 */
export const SERVER_POOL = 20;

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, not "${raw}"`);
  }
  return value;
}

function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, not "${raw}"`);
}

function url(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = env[name] || fallback;
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error();
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, not "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function logLevel(env: NodeJS.ProcessEnv): string {
  const raw = env.LOG_LEVEL;
  if (raw === undefined || raw === '') return 'info';
  if (!LOG_LEVELS.includes(raw)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, not "${raw}"`);
  return raw;
}

/** The value is never echoed: it may carry a password. */
function databaseUrl(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.DATABASE_URL;
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL | undefined;
  try {
    parsed = new URL(raw);
  } catch {
    // reported below
  }
  if (!parsed || (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')) {
    throw new ConfigError('DATABASE_URL must be a URL like postgres://user:password@host:5432/database');
  }
  if (!parsed.hostname && !parsed.searchParams.get('host')) {
    throw new ConfigError('DATABASE_URL names no host (postgres://user:password@host:5432/database)');
  }
  return raw;
}

/** Printable, no spaces (it is sent as `Authorization: Bearer <token>`); at least 16 characters. The value is never echoed. */
function metricsToken(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.METRICS_TOKEN;
  if (raw === undefined || raw === '') return undefined;
  if (!/^[\x21-\x7e]{16,512}$/.test(raw)) throw new ConfigError('METRICS_TOKEN must be 16 to 512 printable characters without spaces');
  return raw;
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, allowed: readonly T[]): T | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, not "${raw}"`);
  return raw as T;
}

/**
 * TEST_CHARGE_STEP (test only): `pause:<step>` or `die:<step>`, optionally `@<cents>` for
 * charges of that amount only, several separated by commas; the steps are named in
 * payments/charge-steps.ts.
 */
function chargeSteps(env: NodeJS.ProcessEnv): Config['testChargeSteps'] {
  const raw = env.TEST_CHARGE_STEP;
  if (raw === undefined || raw === '') return [];
  return raw.split(',').map((part) => {
    const match = /^(pause|die):(reserved|answered|recorded)(?:@([1-9][0-9]{0,9}))?$/.exec(part);
    if (!match) throw new ConfigError(`TEST_CHARGE_STEP must be pause:<step> or die:<step> (steps reserved, answered, recorded), each with an optional @<cents>, not "${raw}"`);
    return { action: match[1] as 'pause' | 'die', step: match[2]!, ...(match[3] ? { cents: Number(match[3]) } : {}) };
  });
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  return {
    port,
    webConcurrency: integer(env, 'WEB_CONCURRENCY', 1, 1, 64),
    databaseUrl: databaseUrl(env),
    databaseWaitSeconds: integer(env, 'DATABASE_WAIT_SECONDS', 30, 0, 3600),
    databasePreparedStatements: boolean(env, 'DATABASE_PREPARED_STATEMENTS', true),
    databasePoolMax: integer(env, 'DATABASE_POOL_MAX', SERVER_POOL, 10, 200),
    dataDir: resolve(env.DATA_DIR || '.data'),
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 300, 1, 1_000_000),
    bulkSessionRateLimitPerMinute: integer(env, 'BULK_SESSION_RATE_LIMIT_PER_MINUTE', 30, 1, 1_000_000),
    bulkChunkRows: integer(env, 'BULK_CHUNK_ROWS', 1000, 1, 1000),
    webhookRetryDelaySeconds: integer(env, 'WEBHOOK_RETRY_DELAY_SECONDS', 900, 0, 86_400),
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 1, 600_000),
    webhookLeaseMarginSeconds: integer(env, 'WEBHOOK_LEASE_MARGIN_SECONDS', 30, 1, 3600),
    webhookAllowInsecureUrls: boolean(env, 'WEBHOOK_ALLOW_INSECURE_URLS', false),
    webhookLogRetentionDays: integer(env, 'WEBHOOK_LOG_RETENTION_DAYS', 30, 1, 3650),
    eventRetentionDays: integer(env, 'EVENT_RETENTION_DAYS', 30, 1, 3650),
    eventsPageMaxBytes: integer(env, 'EVENTS_PAGE_MAX_BYTES', 4 * 1024 * 1024, 65_536, 1024 * 1024 * 1024),
    webhookSecretGraceHours: integer(env, 'WEBHOOK_SECRET_GRACE_HOURS', 24, 0, 720),
    webhookDisableAfterDays: integer(env, 'WEBHOOK_DISABLE_AFTER_DAYS', 5, 2, 365),
    portalUrl: url(env, 'PORTAL_URL', `http://127.0.0.1:${port}/portal`),
    shortLinkBaseUrl: url(env, 'SHORT_LINK_BASE_URL', `http://127.0.0.1:${port}/s`),
    dataEncryptionKey: env.DATA_ENCRYPTION_KEY || undefined,
    logLevel: logLevel(env),
    metricsEnabled: boolean(env, 'METRICS_ENABLED', true),
    metricsToken: metricsToken(env),
    smtpUrl: env.SMTP_URL || undefined,
    mailFrom: env.MAIL_FROM || 'Debt Collection Service <no-reply@debt-collection.example>',
    paymentGateway: oneOf(env, 'PAYMENT_GATEWAY', ['sandbox'] as const),
    publicUrl: url(env, 'PUBLIC_URL', `http://127.0.0.1:${port}`),
    stripeApiUrl: url(env, 'STRIPE_API_URL', 'https://api.stripe.com'),
    authorizeNetApiUrl: url(env, 'AUTHORIZE_NET_API_URL', 'https://api.authorize.net'),
    processorTimeoutMs: integer(env, 'PROCESSOR_TIMEOUT_MS', 30_000, 100, 120_000),
    sandboxAchSettlementSeconds: integer(env, 'SANDBOX_ACH_SETTLEMENT_SECONDS', 172_800, 0, 31_536_000),
    sandboxGatewayLatencyMs: integer(env, 'SANDBOX_GATEWAY_LATENCY_MS', 0, 0, 60_000),
    gatewayAnswerWaitMs: integer(env, 'GATEWAY_ANSWER_WAIT_MS', 10_000, 1, 600_000),
    chargeRecoveryAfterSeconds: integer(env, 'CHARGE_RECOVERY_AFTER_SECONDS', 120, 0, 86_400),
    dueWorkChargesInFlight: integer(env, 'DUE_WORK_CHARGES_IN_FLIGHT', 64, 1, 1024),
    passwordScryptLog2N: 17,
    testSandboxLoseAnswerCents: env.TEST_SANDBOX_LOSE_ANSWER_CENTS ? integer(env, 'TEST_SANDBOX_LOSE_ANSWER_CENTS', 0, 1, 1_000_000_000) : undefined,
    testChargeSteps: chargeSteps(env),
  };
}
