/**
 * bench:scheduler's check that the bare-SQL baseline records the same events as ours: for a
 * sample of accounts (the same external ids in both organizations), the events naming the
 * account or one of its charges, counted by name; and for every event name, the key paths of the
 * payloads (recursively, an array's items merged under `[]`), which must be the same sets. The
 * payloads' JSON text per instalment is compared by the caller.
 */
import type { Knex } from 'knex';
import { eventBodyText } from '../server/kernel/event-body';

export const SAMPLE_ACCOUNTS = 20;

/** An event's stored body as its JSON text: ours compressed (event-body.ts), the baseline's as the text itself. */
export function storedBodyText(body: Buffer): string {
  return body[0] === 0x7b ? body.toString('utf8') : eventBodyText(body);
}

/** Every key path of a JSON value: `a.b`, `a.list[].c`. */
function keyPaths(value: unknown, prefix: string, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) keyPaths(item, `${prefix}[]`, into);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      const path = prefix ? `${prefix}.${key}` : key;
      into.add(path);
      keyPaths(inner, path, into);
    }
  }
}

export interface EventShapes {
  /** By the account's external id: its events' names with how many of each. */
  namesOf: Map<string, string>;
  /** By event name: the key paths of its payloads. */
  keysOf: Map<string, Set<string>>;
}

/** The events of `org`'s sampled accounts (and their charges): their names and key paths. */
export async function eventShapes(db: Knex, org: string): Promise<EventShapes> {
  const { rows } = await db.raw<{ rows: { external_id: string; name: string; body: Buffer }[] }>(
    `WITH sample AS (SELECT id, external_id FROM debt_accounts WHERE organization_id = :org ORDER BY external_id LIMIT :n),
          named AS (SELECT id, external_id FROM sample UNION ALL SELECT ch.id, s.external_id FROM charges ch JOIN sample s ON ch.debt_account_id = s.id)
     SELECT named.external_id, e.name, e.body FROM webhook_events e JOIN named ON e.object_id = named.id
      WHERE e.organization_id = :org ORDER BY e.sequence`,
    { org, n: SAMPLE_ACCOUNTS },
  );
  const counts = new Map<string, Map<string, number>>();
  const keysOf = new Map<string, Set<string>>();
  for (const { external_id, name, body } of rows) {
    const byName = counts.get(external_id) ?? counts.set(external_id, new Map()).get(external_id)!;
    byName.set(name, (byName.get(name) ?? 0) + 1);
    keyPaths(JSON.parse(storedBodyText(body)), '', keysOf.get(name) ?? keysOf.set(name, new Set()).get(name)!);
  }
  const namesOf = new Map(
    [...counts].map(([account, byName]) => [account, [...byName].sort(([a], [b]) => a.localeCompare(b)).map(([name, n]) => `${name}×${n}`).join(', ')]),
  );
  return { namesOf, keysOf };
}

/** What differs between ours and bare's events (empty: the same names, counts and key sets). */
export function shapeDifferences(ours: EventShapes, bare: EventShapes): string[] {
  const differences: string[] = [];
  for (const account of new Set([...ours.namesOf.keys(), ...bare.namesOf.keys()])) {
    const a = ours.namesOf.get(account);
    const b = bare.namesOf.get(account);
    if (a !== b) differences.push(`account ${account}: ours ${a ?? 'none'}; bare ${b ?? 'none'}`);
  }
  for (const name of new Set([...ours.keysOf.keys(), ...bare.keysOf.keys()])) {
    const a = ours.keysOf.get(name) ?? new Set<string>();
    const b = bare.keysOf.get(name) ?? new Set<string>();
    const onlyOurs = [...a].filter((path) => !b.has(path));
    const onlyBare = [...b].filter((path) => !a.has(path));
    if (onlyOurs.length > 0) differences.push(`${name}: keys only ours: ${onlyOurs.join(' ')}`);
    if (onlyBare.length > 0) differences.push(`${name}: keys only bare: ${onlyBare.join(' ')}`);
  }
  return differences;
}
