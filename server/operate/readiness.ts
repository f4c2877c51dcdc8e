/**
 * Whether this process should be sent traffic (GET /readyz): the database answers, every
 * migration this code knows has run, the job workers have started, and the process is not
 * stopping. The start (server/main.ts) says each step as it completes; a stop says `drain()`
 * before anything else, so /readyz answers 503 from the first moment of a SIGTERM.
 */
import type { Knex } from 'knex';
import { migrationSource } from '../db/migrations';

/** How long the database may take to answer a probe before the probe says it does not. */
const PROBE_WITHIN_MS = 2_000;

export interface ReadinessReport {
  status: 'ready' | 'not_ready';
  database: 'ok' | 'unreachable' | 'starting';
  migrations: 'current' | 'pending' | 'unknown';
  workers: 'started' | 'starting';
  draining: boolean;
}

export class Readiness {
  private db: Knex | undefined;
  private workersStarted = false;
  private stopping = false;

  /** A process that serves at once (in-process tests and benchmarks): its workers are someone else's concern. */
  static serving(db: Knex): Readiness {
    const readiness = new Readiness();
    readiness.databaseOpened(db);
    readiness.workersReady();
    return readiness;
  }

  databaseOpened(db: Knex): void {
    this.db = db;
  }

  workersReady(): void {
    this.workersStarted = true;
  }

  /** The stop began: not ready from now on. */
  drain(): void {
    this.stopping = true;
  }

  get draining(): boolean {
    return this.stopping;
  }

  /** One statement: it answers (the database) and counts this code's migrations among those run. */
  async report(): Promise<ReadinessReport> {
    let database: ReadinessReport['database'] = 'starting';
    let migrations: ReadinessReport['migrations'] = 'unknown';
    if (this.db) {
      const known = await migrationSource.getMigrations([]);
      try {
        const { rows } = await probe(
          this.db.raw<{ rows: { applied: number }[] }>(
            'SELECT count(*)::int AS applied FROM knex_migrations WHERE name = ANY(?)',
            [known],
          ),
        );
        database = 'ok';
        migrations = rows[0]!.applied === known.length ? 'current' : 'pending';
      } catch (error) {
        // No migrations table yet: the database answers, nothing has been migrated.
        if ((error as { code?: string }).code === '42P01') {
          database = 'ok';
          migrations = 'pending';
        } else database = 'unreachable';
      }
    }
    const workers = this.workersStarted ? 'started' : 'starting';
    const ready = database === 'ok' && migrations === 'current' && workers === 'started' && !this.stopping;
    return { status: ready ? 'ready' : 'not_ready', database, migrations, workers, draining: this.stopping };
  }
}

function probe<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error('the database did not answer in time')), PROBE_WITHIN_MS);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
