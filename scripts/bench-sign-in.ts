/**
 * npm run bench:sign-in — a wrong password for a known e-mail against an unknown e-mail, through
 * the sign-in service on a real database (the account read, the lock's statements, scrypt), in
 * alternating order, so that neither answers faster and tells which addresses have an account.
 * Prints the median and p90 of each and the ratio of the medians (1.00 = the same time).
 *
 *   npm run bench:sign-in [-- --tries 40]
 *
 * DATABASE_URL: an existing server (a scratch database is created on it and dropped after);
 * unset, an embedded PostgreSQL under .data/, removed after.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import pino from 'pino';
import type { AppDeps } from '../server/deps';
import { loadConfig } from '../server/kernel/config';
import { SecretBox } from '../server/crypto/secrets';
import { createOrganization } from '../server/organizations/organization-repo';
import type { Tenant } from '../server/kernel/tenant';
import { hashPassword } from '../server/portal-logins/passwords';
import { portalAccountRepo } from '../server/portal-logins/portal-account-repo';
import { signIn } from '../server/portal-logins/sign-in';
import { openScratchDatabase } from './scratch-database';

const { values: options } = parseArgs({ options: { tries: { type: 'string', default: '40' } } });
const tries = Number(options.tries);

const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

async function main(): Promise<void> {
  const scratch = await openScratchDatabase('bench-sign-in');
  try {
    const { db } = scratch;
    const deps = { db, secrets: new SecretBox(randomBytes(32)), config: loadConfig({}), logger: pino({ level: 'silent' }), clock: () => new Date() } as unknown as AppDeps;
    const organization = await createOrganization(db, 'Bench Recovery', 'ops@bench.example');
    const tenant: Tenant = { organizationId: organization.organization_id, environment: 'production', tokenHash: '' };
    const [customer] = await db('customers').insert({ organization_id: tenant.organizationId, environment: 'production', name: 'Maria Gonzalez', email: 'maria@bench.example' }).returning('id');
    const email = 'maria@bench.example';
    await portalAccountRepo(db, tenant).insert({ customer_id: customer.id, email, password_hash: await hashPassword('violet tractor sings'), created_at: new Date() });
    await db('portal_accounts').update({ confirmed_at: new Date() });

    const timed = async (address: string) => {
      // The lock would answer without checking after five: each try starts unlocked.
      await db('portal_sign_in_locks').delete();
      const start = process.hrtime.bigint();
      const outcome = await signIn(deps, tenant, { email: address, password: 'wrong password here' }, new Date(), async () => undefined);
      if (outcome.kind !== 'refused') throw new Error(`expected a refusal, got ${outcome.kind}`);
      return Number(process.hrtime.bigint() - start) / 1e6;
    };
    await timed(email);
    await timed('warm-up@bench.example');
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < tries; i++) {
      // Alternating which goes first, so that neither profits from the other's warm caches.
      if (i % 2 === 0) {
        known.push(await timed(email));
        unknown.push(await timed(`nobody-${i}@bench.example`));
      } else {
        unknown.push(await timed(`nobody-${i}@bench.example`));
        known.push(await timed(email));
      }
    }
    const line = (name: string, values: number[]) => `${name.padEnd(34)} median ${quantile(values, 0.5).toFixed(1)} ms   p90 ${quantile(values, 0.9).toFixed(1)} ms`;
    console.log(`database: ${scratch.source}; ${tries} tries each, alternating`);
    console.log(line('wrong password, known e-mail', known));
    console.log(line('unknown e-mail (baseline)', unknown));
    console.log(`ratio of medians (known / unknown): ${(quantile(known, 0.5) / quantile(unknown, 0.5)).toFixed(3)}`);
  } finally {
    await scratch.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
