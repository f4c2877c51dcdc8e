/**
 * The folders of server/ point one way: a module imports only its own folder and the floors
 * below it (STYLE: "no import circle, and no import running back up a floor"). A new folder
 * or top-level file must be given its floor here, which is where its place in the house is
 * decided.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const SERVER = join(__dirname, '../../server');

/** Lowest first. A top-level file `server/x.ts` is the room `:x`. */
const FLOORS: string[][] = [
  ['observability'],
  ['kernel', 'crypto'],
  ['db'],
  ['http', 'events', 'jobs', 'mail', 'gateway', 'idempotency', 'organizations', 'files'],
  [':deps', 'operate'],
  ['customer-store', 'charge-store', 'dispute-store', 'settings', 'event-log', 'payment-processors'],
  ['locations', 'payment-terms'],
  ['payment-methods', 'debt-accounts'],
  ['customers'],
  ['customer-sessions'],
  ['communications'],
  ['disputes', 'documents', 'tickets'],
  ['validation-notices'],
  ['payments'],
  ['payment-plans'],
  ['settlement-offers', 'autopay', 'external-charges', 'processor-notices'],
  ['sandbox', 'bulk', 'portal-logins'],
  ['portal', 'webhooks'],
  [':workers'],
  [':app'],
  [':main'],
];

const floorOf = new Map(FLOORS.flatMap((rooms, floor) => rooms.map((room) => [room, floor] as const)));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

function roomOf(path: string): string {
  const [first, ...rest] = relative(SERVER, path).split('/');
  return rest.length > 0 ? first! : `:${first!.replace(/\.ts$/, '')}`;
}

/** Every relative import (static, type-only, re-export or dynamic) of a file, resolved to a file of server/. */
function importsOf(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  const specifiers = [...text.matchAll(/(?:from\s+|import\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g)].map((match) => match[1]!);
  return specifiers
    .map((specifier) => normalize(join(dirname(path), specifier)))
    .map((base) => [base, `${base}.ts`, join(base, 'index.ts')].find((candidate) => existsSync(candidate) && statSync(candidate).isFile()))
    .filter((target): target is string => target !== undefined && target.startsWith(SERVER));
}

const files = sources(SERVER);

test('every folder and top-level file of server/ has a floor', () => {
  expect([...new Set(files.map(roomOf))].filter((room) => !floorOf.has(room)).sort()).toEqual([]);
});

test('no module imports a folder on its own floor or above it (so no import circle between folders)', () => {
  const wrong: string[] = [];
  for (const file of files) {
    const from = roomOf(file);
    for (const target of importsOf(file)) {
      const to = roomOf(target);
      if (to !== from && floorOf.get(to)! >= floorOf.get(from)!) wrong.push(`${relative(SERVER, file)} -> ${relative(SERVER, target)}`);
    }
  }
  expect(wrong).toEqual([]);
});

test('the check sees imports: the app imports the routers of the floors below it', () => {
  expect(importsOf(join(SERVER, 'app.ts')).map(roomOf)).toEqual(expect.arrayContaining(['portal', 'webhooks', 'payments', 'kernel']));
});
