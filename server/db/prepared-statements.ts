/**
 * Named prepared statements for the statements the service runs again and again. knex sends
 * each statement unnamed, so PostgreSQL parses, analyses and plans it anew every time: for the
 * short lookups and writes a request is made of, that is most of the database's work. A
 * statement named after its text (a hash of it) is parsed once per pooled connection and then
 * only bound and executed; PostgreSQL keeps its plan (a generic one once that costs no more than
 * planning each time), and replans it by itself when a table it reads changes.
 *
 * Only a plain SELECT, INSERT, UPDATE, DELETE or WITH of at most MAX_BINDINGS parameters is
 * named (a bulk insert of many rows is a statement of its own each time: never worth keeping),
 * and at most MAX_NAMES texts per process; the rest run unnamed, as before. Off with
 * DATABASE_PREPARED_STATEMENTS=false, for a connection pooler that hands one session's
 * statements to another (PgBouncer in transaction mode before 1.21).
 */
import { createHash } from 'node:crypto';

const MAX_BINDINGS = 64;
const MAX_TEXT = 16_384;
const MAX_NAMES = 2000;
const PLAIN = /^\s*(?:select|insert|update|delete|with)\b/i;

interface Compiled {
  sql?: string;
  bindings?: unknown[];
  options?: { name?: string };
}

const names = new Map<string, string | null>();

/** The statement's name, or null when it runs unnamed. */
function nameOf(sql: string, bindings: number): string | null {
  const known = names.get(sql);
  if (known !== undefined) return known;
  const name = bindings <= MAX_BINDINGS && sql.length <= MAX_TEXT && PLAIN.test(sql) && !sql.includes(';') ? `s_${createHash('sha256').update(sql).digest('base64url').slice(0, 32)}` : null;
  if (names.size < MAX_NAMES) names.set(sql, name);
  return name;
}

let installed = false;

/**
 * Names the statements of every knex client created with `preparedStatements: true` in its
 * config (a transaction's client shares its config). Installed once per process on knex's
 * PostgreSQL client, which every client and transaction of it inherits.
 */
export function installPreparedStatements(): void {
  if (installed) return;
  installed = true;
  const PgClient = require('knex/lib/dialects/postgres/index.js') as { prototype: { _query(connection: unknown, obj: Compiled): Promise<unknown>; config: { preparedStatements?: boolean } } };
  const query = PgClient.prototype._query;
  PgClient.prototype._query = function (this: { config: { preparedStatements?: boolean } }, connection: unknown, obj: Compiled) {
    if (this.config?.preparedStatements && obj.sql && !obj.options?.name) {
      const name = nameOf(obj.sql, obj.bindings?.length ?? 0);
      if (name) obj.options = { ...obj.options, name };
    }
    return query.call(this, connection, obj);
  };
}
