/**
 * Two rooms, two concerns: server/event-payloads/ says what an event tells about its record
 * (the reads and the builders), server/webhooks/ delivers it (endpoints, signing, lanes,
 * delivery, recovery, health). They meet at one door, event-payloads/index.ts, which only the
 * webhooks open; the payloads know nothing of deliveries, and read the resources' tables with
 * their own queries, never through a resource's store or repo. And no file of server/ is part
 * of an import circle.
 */
import { join } from 'node:path';
import { importCircles, importsOf, roomOf, SERVER, serverFiles, shown } from '../support/server-imports';

const files = serverFiles();
const ENTRY = join(SERVER, 'event-payloads', 'index.ts');
const importing = (from: (file: string) => boolean, to: (target: string) => boolean) =>
  files.filter(from).flatMap((file) => importsOf(file).filter(to).map((target) => `${shown(file)} -> ${shown(target)}`));

test('the webhooks reach the event payloads through one entry, index.ts', () => {
  const doors = importing(
    (file) => roomOf(file) === 'webhooks',
    (target) => roomOf(target) === 'event-payloads',
  ).map((edge) => edge.split(' -> ')[1]);
  expect(doors.length).toBeGreaterThan(0);
  expect([...new Set(doors)]).toEqual(['event-payloads/index.ts']);
});

test('only the webhooks open that entry, and nothing outside the room imports its other files', () => {
  expect(importing((file) => roomOf(file) !== 'event-payloads' && roomOf(file) !== 'webhooks', (target) => roomOf(target) === 'event-payloads')).toEqual([]);
  expect(importing((file) => roomOf(file) === 'webhooks', (target) => roomOf(target) === 'event-payloads' && target !== ENTRY)).toEqual([]);
});

test('nothing in the event payloads imports the webhooks', () => {
  expect(importing((file) => roomOf(file) === 'event-payloads', (target) => roomOf(target) === 'webhooks')).toEqual([]);
});

test("no file of the event payloads imports a resource's store or repo", () => {
  const store = (target: string) => roomOf(target).endsWith('-store') || /-repo\.ts$/.test(target);
  expect(importing((file) => roomOf(file) === 'event-payloads', store)).toEqual([]);
  // The check sees such an import: the API's side does read through them.
  expect(importing((file) => roomOf(file) === 'disputes', store).length).toBeGreaterThan(0);
});

test('no file of server/ is part of an import circle', () => {
  expect(importCircles(files)).toEqual([]);
  // The walk finds a circle when there is one (a made-up graph: a -> b -> c -> a, c -> d).
  const graph: Record<string, string[]> = { a: ['b'], b: ['c'], c: ['a', 'd'], d: [] };
  const at = (name: string) => join(SERVER, `${name}.ts`);
  const circles = importCircles(Object.keys(graph).map(at), (file) => graph[shown(file).replace('.ts', '')]!.map(at));
  expect(circles).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
});
