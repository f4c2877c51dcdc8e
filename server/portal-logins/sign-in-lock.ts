/**
 * The sign-in lock: five wrong sign-ins in a row for one e-mail lock it for 15 minutes, in the
 * database, for every server process. It counts the address as typed, whether an account has
 * it or not, so that a lock says nothing about who has an account; it is kept under a keyed
 * digest of the address (the data key's `mac`), never the address itself.
 */
import type { Knex } from 'knex';
import type { SecretBox } from '../crypto/secrets';
import type { Tenant } from '../kernel/tenant';
import { tenantColumns } from '../db/tenant';

export const MAX_SIGN_IN_FAILURES = 5;
export const SIGN_IN_LOCK_MINUTES = 15;
const LOCKS = 'portal_sign_in_locks';

export const emailDigest = (secrets: SecretBox, tenant: Tenant, email: string) => secrets.mac('portal-sign-in-lock', `${tenant.organizationId}:${tenant.environment}:${email}`);

export function signInLock(db: Knex, tenant: Tenant, digest: string) {
  const key = { ...tenantColumns(tenant), email_digest: digest };
  return {
    async lockedUntil(now: Date): Promise<Date | undefined> {
      const row = await db(LOCKS).where(key).first('locked_until');
      const until = row?.locked_until as Date | null | undefined;
      return until && until.getTime() > now.getTime() ? until : undefined;
    },

    /** Counts a failure in one statement (two at once both count); answers the lock it set, if any. */
    async fail(now: Date): Promise<Date | undefined> {
      const lockAt = new Date(now.getTime() + SIGN_IN_LOCK_MINUTES * 60_000);
      const { rows } = await db.raw(
        `INSERT INTO ${LOCKS} (organization_id, environment, email_digest, failures, locked_until)
              VALUES (:organization_id, :environment, :email_digest, 1, CASE WHEN 1 >= :max THEN :lockAt::timestamptz END)
         ON CONFLICT (organization_id, environment, email_digest) DO UPDATE
                 SET locked_until = CASE WHEN ${LOCKS}.failures + 1 >= :max THEN :lockAt::timestamptz ELSE ${LOCKS}.locked_until END,
                     failures = CASE WHEN ${LOCKS}.failures + 1 >= :max THEN 0 ELSE ${LOCKS}.failures + 1 END
           RETURNING locked_until`,
        { ...key, max: MAX_SIGN_IN_FAILURES, lockAt },
      );
      const until = rows[0]?.locked_until as Date | null;
      return until && until.getTime() > now.getTime() ? until : undefined;
    },

    async clear(): Promise<void> {
      await db(LOCKS).where(key).delete();
    },
  };
}
