/** One page of a list, as a service answers it; the route wraps it in the paging envelope. */
import type { Knex } from 'knex';
import { paginate, type PageRequest } from './pagination';

export interface Listed<T> {
  total: number;
  /** The page's rows as fetched: their created_at is the envelope's submitted dates. */
  rows: { created_at: Date }[];
  /** The same records as API objects. */
  data: T[];
}

/** Counts `query`, fetches one page of it in the stable order, and turns the rows into API objects. */
export async function listPage<Row extends { created_at: Date }, T>(
  query: Knex.QueryBuilder,
  page: PageRequest,
  { columns, table, order = 'asc' }: { columns: string[]; table: string; order?: 'asc' | 'desc' },
  toApi: (rows: Row[]) => Promise<T[]> | T[],
): Promise<Listed<T>> {
  const { total, rows } = await paginate<Row>(query, page, columns, table, order);
  return { total, rows, data: await toApi(rows) };
}
