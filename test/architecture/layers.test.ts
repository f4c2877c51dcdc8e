/**
 * The folders of server/ point one way: a module imports only its own folder and the floors
 * below it (STYLE: "no import circle, and no import running back up a floor"). A new folder
 * or top-level file must be given its floor here, which is where its place in the house is
 * decided.
 */
import { join } from 'node:path';
import { importsOf, roomOf, SERVER, serverFiles, shown } from '../support/server-imports';

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
  ['sandbox', 'bulk', 'portal-logins', 'event-payloads'],
  ['portal', 'webhooks'],
  [':workers'],
  [':app'],
  [':main'],
];

const floorOf = new Map(FLOORS.flatMap((rooms, floor) => rooms.map((room) => [room, floor] as const)));

const files = serverFiles();

test('every folder and top-level file of server/ has a floor', () => {
  expect([...new Set(files.map(roomOf))].filter((room) => !floorOf.has(room)).sort()).toEqual([]);
});

test('no module imports a folder on its own floor or above it (so no import circle between folders)', () => {
  const wrong: string[] = [];
  for (const file of files) {
    const from = roomOf(file);
    for (const target of importsOf(file)) {
      const to = roomOf(target);
      if (to !== from && floorOf.get(to)! >= floorOf.get(from)!) wrong.push(`${shown(file)} -> ${shown(target)}`);
    }
  }
  expect(wrong).toEqual([]);
});

test('the check sees imports: the app imports the routers of the floors below it', () => {
  expect(importsOf(join(SERVER, 'app.ts')).map(roomOf)).toEqual(expect.arrayContaining(['portal', 'webhooks', 'payments', 'kernel']));
});
