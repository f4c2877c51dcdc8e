/**
 * What the service is built from, handed down to every router, service and worker
 * (Backstage's `createRouter(options)`): dependencies come in, never up, so nothing below
 * the app imports the app.
 */
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from './kernel/config';
import type { SecretBox } from './crypto/secrets';
import type { EventRecorder } from './events/events';
import type { FileStore } from './files/file-store';
import type { Boss } from './jobs/queue';

export interface AppDeps {
  config: Config;
  db: Knex;
  logger: Logger;
  secrets: SecretBox;
  /** The job queue (pg-boss) in the same database: background work is enqueued here. */
  boss: Boss;
  /** The time of every rule of time (dates "today or later", session and card expiry); tests move it. */
  clock: () => Date;
  /** The one port through which services say what happened (webhooks listen behind it). */
  events: EventRecorder;
  /** The one storage port for files (evidence, documents, attachments): disk under DATA_DIR built in. */
  files: FileStore;
}
