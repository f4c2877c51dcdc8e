/**
 * When a session expires. Every computation takes `now` from the app's clock, never from
 * the database or Date, so that tests can move time.
 */
const HOUR_MS = 3_600_000;
/** Without valid_until (and not forever): 24 hours after the most recent use. */
export const SLIDING_HOURS = 24;

export interface Lifetime {
  valid_until_hours: number | null;
  is_valid_forever: boolean;
}

const hoursAfter = (time: Date, hours: number) => new Date(time.getTime() + hours * HOUR_MS);

/** At creation, which counts as the first use. Null: never. */
export function expiryAtCreation(lifetime: Lifetime, now: Date): Date | null {
  if (lifetime.is_valid_forever) return null;
  return hoursAfter(now, lifetime.valid_until_hours ?? SLIDING_HOURS);
}

/** After a use at `now`: a sliding session moves; fixed and forever ones keep theirs. */
export function expiryAfterUse(lifetime: Lifetime & { expires_at: Date | null }, now: Date): Date | null {
  if (lifetime.is_valid_forever || lifetime.valid_until_hours !== null) return lifetime.expires_at;
  return hoursAfter(now, SLIDING_HOURS);
}

/** Expired from the instant expires_at is reached. */
export function isExpired(expiresAt: Date | null, now: Date): boolean {
  return expiresAt !== null && now.getTime() >= expiresAt.getTime();
}
