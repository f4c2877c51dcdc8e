/**
 * A bulk action accepted by a server process that is then killed (SIGKILL: no clean-up at
 * all) completes once another process starts on the same database, each row exactly once.
 */
import { connect } from '../../server/db/database';
import { createOrganization } from '../../server/organizations/organization-repo';
import { processClient, startServerProcess, type Spawned } from '../support/processes';
import { createTestDatabase } from '../support/test-app';

// Chunks of 100 rows (the default is the whole action at once): the kill can then come after
// some chunks committed and before the others, and the second process must finish only those.
const serve = (databaseUrl: string) => startServerProcess(databaseUrl, { BULK_CHUNK_ROWS: '100' });

test('a bulk accepted before a kill -9 completes after the restart, creating every row once', async () => {
  const database = await createTestDatabase();
  const db = connect(database.url, 2);
  const children: Spawned[] = [];
  try {
    const organization = await createOrganization(db, 'Crash Test Agency');
    const rows = Array.from({ length: 1000 }, (_, i) => ({
      customer: { name: `Customer ${i}`, email: `c${i}@mail.debt-collection.example`, external_id: `CR-${i}`, address: { postal_code: '78704' } },
      location: { name: 'Lakeside Medical Center', external_id: 'CR-LOC' },
      parent_debt_accounts: [{ external_id: `CR-P-${i}`, balance: 0 }],
      debt_accounts: [
        { external_id: `CR-A-${i}`, parent_external_id: `CR-P-${i}`, balance: 100 },
        { external_id: `CR-B-${i}`, parent_external_id: `CR-P-${i}`, balance: 50 },
      ],
    }));

    const { server: first, port: firstPort } = await serve(database.url);
    children.push(first);
    const api = (port: number) => processClient(port, organization.production_token);
    const accepted = await api(firstPort).POST('/bulk', { body: rows });
    expect(accepted.response.status).toBe(201);
    first.child.kill('SIGKILL');
    await first.exited;
    await expect(fetch(`http://127.0.0.1:${firstPort}/health`)).rejects.toThrow();

    const { server: second, port: secondPort } = await serve(database.url);
    children.push(second);
    const id = accepted.data!.data.bulk_id;
    let status = '';
    for (let attempt = 0; attempt < 600 && status !== 'completed'; attempt++) {
      status = (await api(secondPort).GET('/bulk/{id}', { params: { path: { id } } })).data!.data.status;
      if (status !== 'completed') await new Promise((done) => setTimeout(done, 100));
    }
    expect(status).toBe('completed');
    const counted = await db.raw(
      `SELECT (SELECT count(*) FROM customers WHERE organization_id = :org)::int AS customers,
              (SELECT count(DISTINCT external_id) FROM customers WHERE organization_id = :org)::int AS distinct_customers,
              (SELECT count(*) FROM debt_accounts WHERE organization_id = :org)::int AS accounts`,
      { org: organization.organization_id },
    );
    expect(counted.rows[0]).toEqual({ customers: 1000, distinct_customers: 1000, accounts: 3000 });
  } finally {
    for (const { child } of children) child.kill('SIGKILL');
    await db.destroy();
    await database.drop();
  }
}, 120_000);
