/** Statements counted where they leave this process for the database, for the benchmarks. */
import pg from 'pg';

/**
 * Calls `seen` with every statement sent on a knex connection of this process (every pg client
 * knex made: it marks them `__knexUid`), whatever sent it: knex, or code running on the
 * connection of a knex transaction directly (pg-boss's SQL, COPY). pg-boss's own pool is not
 * counted.
 */
export function countStatements(seen: (sql: string) => void): void {
  const Client = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown; __knexUid?: string };
  const query = Client.query;
  Client.query = function (this: { __knexUid?: string }, ...args: unknown[]) {
    if (this.__knexUid !== undefined) {
      const [first] = args;
      seen(typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? ''));
    }
    return query.apply(this, args);
  };
}

/**
 * Calls `done` with every statement sent on a knex connection of this process and the time it
 * took, from when it was sent to its answer (a COPY: to the end of its data), in ms.
 */
export function timeStatements(done: (sql: string, ms: number) => void): void {
  const Client = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = Client.query;
  Client.query = function (this: { __knexUid?: string }, ...args: unknown[]) {
    if (this.__knexUid === undefined) return query.apply(this, args);
    const [first] = args;
    const sql = typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '');
    const started = performance.now();
    const end = () => done(sql, performance.now() - started);
    const last = args[args.length - 1];
    if (typeof last === 'function') {
      args[args.length - 1] = function (this: unknown, ...results: unknown[]) {
        end();
        return (last as (...a: unknown[]) => unknown).apply(this, results);
      };
      return query.apply(this, args);
    }
    const result = query.apply(this, args) as { then?: unknown; once?: (event: string, listener: () => void) => void } | undefined;
    if (result && typeof result.then === 'function') {
      (result as Promise<unknown>).then(end, end);
    } else if (result && typeof result.once === 'function') {
      // A COPY … FROM STDIN stream (pg-copy-streams): done when its data has been taken.
      const stream = first as { text?: string; once?: (event: string, listener: () => void) => void };
      const copyText = (stream as { text?: string }).text ?? 'COPY';
      let ended = false;
      const finish = () => {
        if (!ended) done(copyText, performance.now() - started);
        ended = true;
      };
      result.once('finish', finish);
      result.once('error', finish);
    }
    return result;
  };
}
