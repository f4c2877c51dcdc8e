import type { Knex } from 'knex';
import { hashToken, newToken } from '../crypto/secrets';
import type { Environment } from '../kernel/tenant';

export const ORGANIZATIONS = 'organizations';
export const API_TOKENS = 'api_tokens';

export interface CreatedOrganization {
  organization_id: string;
  production_token: string;
  sandbox_token: string;
}

/** Creates an organization with one token per environment; the tokens are shown once, kept hashed. */
export async function createOrganization(db: Knex, name: string, email?: string): Promise<CreatedOrganization> {
  return db.transaction(async (trx) => {
    const [organization] = await trx(ORGANIZATIONS)
      .insert({ name, notification_email: email ?? null })
      .returning<{ id: string }[]>(['id']);
    const organizationId = organization!.id;
    const production_token = await issueToken(trx, organizationId, 'production');
    const sandbox_token = await issueToken(trx, organizationId, 'sandbox');
    return { organization_id: organizationId, production_token, sandbox_token };
  });
}

async function issueToken(db: Knex, organizationId: string, environment: Environment): Promise<string> {
  const token = newToken(environment);
  await db(API_TOKENS).insert({ organization_id: organizationId, environment, token_hash: hashToken(token) });
  return token;
}

/** Revokes every live token of the organization in that environment and issues a new one. */
export async function rotateToken(db: Knex, organizationId: string, environment: Environment): Promise<string | undefined> {
  return db.transaction(async (trx) => {
    const exists = await trx(ORGANIZATIONS).where({ id: organizationId }).first('id');
    if (!exists) return undefined;
    await trx(API_TOKENS)
      .where({ organization_id: organizationId, environment })
      .whereNull('revoked_at')
      .update({ revoked_at: trx.fn.now() });
    return issueToken(trx, organizationId, environment);
  });
}
