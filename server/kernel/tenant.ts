export type Environment = 'production' | 'sandbox';

/** Who is asking: one organization in one environment. Every repo call is scoped by it. */
export interface Tenant {
  organizationId: string;
  environment: Environment;
  /** Hash of the token used; the rate limit counts per token. */
  tokenHash: string;
  /** The API token's row (`api_tokens.id`): the caller an Idempotency-Key belongs to. Unset off the API. */
  tokenId?: string;
  /**
   * How far the sandbox clock of the organization is ahead of real time (0 in production,
   * and where it was not loaded): read with `nowFor` (server/kernel/clock.ts).
   */
  clockOffsetMs?: number;
}

/** The tenant that authentication (server/http/access.ts) found for the request's token. */
export function tenantOf(res: { locals: Record<string, unknown> }): Tenant {
  return res.locals.tenant as Tenant;
}
