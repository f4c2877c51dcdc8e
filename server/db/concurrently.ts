import type { Knex } from 'knex';

/**
 * Runs independent queries at once on a pool; one after the other inside a transaction, whose
 * single connection takes one query at a time (pg queues them and warns that it will stop).
 */
export async function concurrently<T extends unknown[]>(db: Knex | Knex.QueryBuilder, ...tasks: { [K in keyof T]: () => Promise<T[K]> }): Promise<T> {
  if (!inTransaction(db)) return (await Promise.all(tasks.map((task) => task()))) as T;
  const results: unknown[] = [];
  for (const task of tasks) results.push(await task());
  return results as T;
}

/** Whether `db` (a connection or a query builder) is bound to a transaction's one connection. */
function inTransaction(db: Knex | Knex.QueryBuilder): boolean {
  if ('isTransaction' in db) return Boolean(db.isTransaction);
  return Boolean((db as unknown as { client: { transacting?: boolean } }).client.transacting);
}
