import { diskFileStore } from '../server/files/disk-file-store';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { webhookEvents } from '../server/webhooks/outbox';
import { createApp } from '../server/app';
import { loadConfig } from '../server/config';
import { SecretBox } from '../server/crypto/secrets';
import { customerService } from '../server/customers/customer-service';
import { openScratchDatabase } from './scratch-database';
import { serveForBench } from './bench-server';
import { startQueue } from '../server/jobs/queue';
import type { Tenant } from '../server/kernel/tenant';
import { createOrganization } from '../server/organizations/organization-repo';
import { createLogger } from '../server/logging';
const run = promisify(execFile);
const root = resolve(__dirname, '..');
async function main() {
  const scratch = await openScratchDatabase('prof', 20);
  const { db } = scratch;
  const organization = await createOrganization(db, 'Bench Recovery');
  const tenant: Tenant = { organizationId: organization.organization_id, environment: 'production', tokenHash: '' };
  const logger = createLogger('info', pino.destination('/dev/null'));
  const boss = await startQueue(scratch.url, logger);
  const customer = await customerService({ db, events: webhookEvents(boss), clock: () => new Date() }).create(tenant,
    { name: 'Maria Gonzalez', email: 'maria.gonzalez@debt-collection.example', external_id: 'CUST-100482', address: { postal_code: '78704', city: 'Austin' }, metadata: { portfolio: 'spring-2026' } },
    new Set(['metadata', 'addresses']));
  const config = { ...loadConfig({ PORT: '0' }), rateLimitPerMinute: 1_000_000_000 };
  const served = await serveForBench(createApp({ config, db, logger, secrets: new SecretBox(randomBytes(32)), boss, clock: () => new Date(), events: webhookEvents(boss), files: diskFileStore(config.dataDir) }));
  const url = `${served.base}/customers/${customer.id}`;
  const secs = process.env.SECS ?? '15';
  for (let i = 0; i < Number(process.env.ROUNDS ?? 1); i++) {
    const cpu = process.cpuUsage();
    const { stdout } = await run(join(root, 'node_modules', '.bin', 'autocannon'), ['--json', '-c', '10', '-d', secs, '-H', `Authorization=Bearer ${organization.production_token}`, url], { maxBuffer: 1 << 26 });
    const used = process.cpuUsage(cpu);
    const r = JSON.parse(stdout);
    console.log(`req/s ${r.requests.average} non2xx ${r.non2xx} cpu µs/req ${((used.user + used.system) / r.requests.total).toFixed(0)}`);
  }
  await served.stop();
  await boss.stop({ graceful: false, wait: true });
  await scratch.close();
}
main().catch((e) => { console.error(e); process.exit(1); });
