/**
 * Two server processes on one database, and many first requests at once naming one location
 * that does not exist yet: every request is answered 201 and the location is made once (the
 * insert and its unique key decide in one statement; nothing reads first and inserts after).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { createApiClient, type ApiClient } from '../../client';
import { connect } from '../../server/db/database';
import { freePort } from '../../server/kernel/net';
import { createOrganization } from '../../server/organizations/organization-repo';
import { root, waitForHealth } from '../support/processes';
import { createTestDatabase } from '../support/test-app';

const REQUESTS = 20;

let database: { url: string; drop: () => Promise<void> };
let db: Knex;
const servers: ChildProcess[] = [];
const ports: number[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  db = connect(database.url, 2);
  const key = randomBytes(32).toString('base64');
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: database.url, PORT: String(port), LOG_LEVEL: 'warn', DATA_ENCRYPTION_KEY: key };
    servers.push(spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], { cwd: root, env, stdio: 'ignore' }));
    ports.push(port);
  }
  await Promise.all(ports.map((port) => waitForHealth(port)));
}, 120_000);

afterAll(async () => {
  for (const server of servers) server.kill('SIGKILL');
  await db?.destroy();
  await database?.drop();
});

/** One client per process, the requests alternating between them. */
const clientsOf = (token: string): ApiClient[] => ports.map((port) => createApiClient({ baseUrl: `http://127.0.0.1:${port}/api/v1`, token }));

async function customersOf(clients: ApiClient[]): Promise<string[]> {
  const made = await Promise.all(
    Array.from({ length: REQUESTS }, (_, i) => clients[i % 2]!.POST('/customers', { body: { name: `Dana Whitfield ${i}`, email: `dana${i}@mail.debt-collection.example` } })),
  );
  return made.map((answer) => answer.data!.data.id);
}

async function accountsAtOnce(clients: ApiClient[], customerIds: string[], locationId: string) {
  return Promise.all(
    customerIds.map((customerId, i) =>
      clients[i % 2]!.POST('/debt-accounts', { body: { customer_id: customerId, location_id: locationId, location_name: 'Riverside Imaging', balance: 12500 } }),
    ),
  );
}

const locationsNamed = (organizationId: string, externalId: string) => db('locations').where({ organization_id: organizationId, external_id: externalId }).select('id');

test(`${REQUESTS} accounts created at once over two processes, naming one new location: ${REQUESTS} × 201 and one location`, async () => {
  const organization = await createOrganization(db, 'Riverside Recovery LLC');
  const clients = clientsOf(organization.sandbox_token);
  await clients[0]!.POST('/debt-accounts', {
    body: { customer_id: (await customersOf(clients))[0]!, location_id: 'LOC-EXISTING-01', location_name: 'An earlier location', balance: 100 },
  });
  const answers = await accountsAtOnce(clients, await customersOf(clients), 'LOC-RIVERSIDE-07');
  expect(answers.map((answer) => answer.response.status)).toEqual(Array(REQUESTS).fill(201));
  const locations = await locationsNamed(organization.organization_id, 'LOC-RIVERSIDE-07');
  expect(locations).toHaveLength(1);
  const ids = answers.map((answer) => answer.data!.data.id);
  expect(new Set(await db('debt_accounts').whereIn('id', ids).pluck('location_id'))).toEqual(new Set([locations[0]!.id]));
  const listed = await clients[1]!.GET('/locations/{id}', { params: { path: { id: 'LOC-RIVERSIDE-07' } } });
  expect(listed.data!.data).toMatchObject({ name: 'Riverside Imaging', debt_accounts_count: REQUESTS });
}, 120_000);

test(`${REQUESTS} first accounts of a new tenant at once over two processes: ${REQUESTS} × 201 and one location`, async () => {
  const organization = await createOrganization(db, 'Lakeshore Collections Inc');
  const clients = clientsOf(organization.production_token);
  const answers = await accountsAtOnce(clients, await customersOf(clients), 'LOC-LAKESHORE-01');
  expect(answers.map((answer) => answer.response.status)).toEqual(Array(REQUESTS).fill(201));
  expect(await locationsNamed(organization.organization_id, 'LOC-LAKESHORE-01')).toHaveLength(1);
  expect(Number((await db('locations').where({ organization_id: organization.organization_id }).count<{ n: string }[]>({ n: '*' }))[0]!.n)).toBe(1);
}, 120_000);
