/**
 * npm run bench:events — GET /events read page after page, as a receiver catching up does: for
 * account families of 1 and of 1,000 children (`--children 1,1000`), `--events` events that
 * each embed the whole family (`debt-account.update` of its children, each showing its parent
 * and so every sibling, as spec 6.4 says), read through the whole service (HTTP to an
 * in-process server) from the first page to the last by `links.next`, at limit 100 and 500:
 * pages per second, bytes per second, events per second, the largest answer and how many pages
 * were cut at the size ceiling (EVENTS_PAGE_MAX_BYTES). Each combination is read `--rounds`
 * times; the medians are printed.
 *
 *   npm run bench:events [-- --events 300 --children 1,1000 --limits 100,500 --rounds 3]
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { API_BASE, createApp, listen } from '../server/app';
import { loadConfig } from '../server/kernel/config';
import { SecretBox } from '../server/crypto/secrets';
import { diskFileStore } from '../server/files/disk-file-store';
import { startQueue } from '../server/jobs/queue';
import type { Tenant } from '../server/kernel/tenant';
import { createOrganization } from '../server/organizations/organization-repo';
import { webhookEvents } from '../server/webhooks/outbox';
import { median } from './measure';
import { openScratchDatabase } from './scratch-database';

const { values: options } = parseArgs({
  options: {
    events: { type: 'string', default: '300' },
    children: { type: 'string', default: '1,1000' },
    limits: { type: 'string', default: '100,500' },
    rounds: { type: 'string', default: '3' },
  },
});
const EVENTS = Number(options.events);

async function main(): Promise<void> {
  const scratch = await openScratchDatabase('bench-events', 10);
  const { db } = scratch;
  const logger = pino({ level: 'info' }, pino.destination('/dev/null'));
  const boss = await startQueue(scratch.url, logger);
  let server: Server | undefined;
  try {
    const config = { ...loadConfig({ PORT: '0' }), rateLimitPerMinute: 1_000_000_000 };
    const events = webhookEvents(boss);
    const app = createApp({ config, db, logger, secrets: new SecretBox(randomBytes(32)), boss, clock: () => new Date(), events, files: diskFileStore(config.dataDir) });
    server = await listen(app, 0, '127.0.0.1');
    const address = server.address();
    const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}${API_BASE}`;
    console.log(`${scratch.source}; EVENTS_PAGE_MAX_BYTES ${config.eventsPageMaxBytes}; ${EVENTS} events per family size, each embedding its whole family`);
    console.log(`  ${'children'.padStart(8)} ${'limit'.padStart(5)} ${'pages'.padStart(6)} ${'cut'.padStart(5)} ${'pages/s'.padStart(8)} ${'MB/s'.padStart(7)} ${'events/s'.padStart(9)} ${'largest page'.padStart(13)} ${'bytes/event'.padStart(12)}`);
    for (const children of options.children.split(',').map(Number)) {
      const organization = await createOrganization(db, `Bench events ${children}`);
      const tenant: Tenant = { organizationId: organization.organization_id, environment: 'production', tokenHash: '' };
      // The family as rows (set-based), then its events recorded by the service's own recorder.
      const [customer] = (await db.raw(`INSERT INTO customers (organization_id, environment, name, email) VALUES (?, 'production', 'Bench Family', 'family@bench.example') RETURNING id`, [tenant.organizationId])).rows as { id: string }[];
      const [location] = (await db.raw(`INSERT INTO locations (organization_id, environment, external_id, name) VALUES (?, 'production', 'LOC-1', 'Lakeside') RETURNING id`, [tenant.organizationId])).rows as { id: string }[];
      const [parent] = (
        await db.raw(`INSERT INTO debt_accounts (organization_id, environment, customer_id, location_id, external_id, balance, current_balance) VALUES (?, 'production', ?, ?, 'P', 0, 0) RETURNING id`, [
          tenant.organizationId,
          customer!.id,
          location!.id,
        ])
      ).rows as { id: string }[];
      const { rows: kids } = await db.raw<{ rows: { id: string }[] }>(
        `INSERT INTO debt_accounts (organization_id, environment, customer_id, location_id, parent_id, external_id, balance, current_balance)
         SELECT ?, 'production', ?, ?, ?, 'C-' || g, 1000 + g, 1000 + g FROM generate_series(1, ?::int) AS g RETURNING id`,
        [tenant.organizationId, customer!.id, location!.id, parent!.id, children],
      );
      const recordStart = performance.now();
      for (let done = 0; done < EVENTS; done += 25) {
        const ids = Array.from({ length: Math.min(25, EVENTS - done) }, (_, i) => kids[(done + i) % kids.length]!.id);
        await db.transaction((trx) => events.record(trx, tenant, [{ name: 'debt-account.update', ids }]));
      }
      const recordMs = performance.now() - recordStart;
      const headers = { authorization: `Bearer ${organization.production_token}` };
      for (const limit of options.limits.split(',').map(Number)) {
        const rounds: { ms: number; pages: number; bytes: number; cut: number; largest: number; events: number }[] = [];
        for (let round = 0; round < Number(options.rounds); round++) {
          let url: string | null = `${base}/events?limit=${limit}`;
          const result = { ms: 0, pages: 0, bytes: 0, cut: 0, largest: 0, events: 0 };
          const started = performance.now();
          while (url) {
            const response = await fetch(url, { headers });
            const text = await response.text();
            if (response.status !== 200) throw new Error(`${url}: ${response.status} ${text.slice(0, 200)}`);
            const body = JSON.parse(text) as { data: unknown[]; truncated: boolean; links: { next: string | null } };
            const bytes = Buffer.byteLength(text, 'utf8');
            result.pages += 1;
            result.bytes += bytes;
            result.events += body.data.length;
            result.largest = Math.max(result.largest, bytes);
            if (body.truncated) result.cut += 1;
            url = body.links.next;
          }
          result.ms = performance.now() - started;
          if (result.events !== EVENTS) throw new Error(`read ${result.events} events, recorded ${EVENTS}`);
          rounds.push(result);
        }
        const ms = median(rounds.map((round) => round.ms));
        const { pages, bytes, cut, largest } = rounds[0]!;
        console.log(
          `  ${String(children).padStart(8)} ${String(limit).padStart(5)} ${String(pages).padStart(6)} ${String(cut).padStart(5)} ${((pages * 1000) / ms).toFixed(1).padStart(8)} ${((bytes / 1e6) * (1000 / ms)).toFixed(1).padStart(7)} ${((EVENTS * 1000) / ms).toFixed(0).padStart(9)} ${(largest / 1e6).toFixed(2).padStart(10)} MB ${(bytes / EVENTS).toFixed(0).padStart(12)}`,
        );
      }
      console.log(`           (${EVENTS} events of a family of ${children} recorded in ${(recordMs / 1000).toFixed(1)} s)`);
    }
  } finally {
    if (server) {
      server.closeAllConnections();
      await new Promise((done) => server!.close(done));
    }
    await boss.stop({ graceful: false, wait: true });
    await scratch.close();
  }
}

main().catch((error: Error) => {
  console.error(error.stack ?? error.message);
  process.exit(1);
});
