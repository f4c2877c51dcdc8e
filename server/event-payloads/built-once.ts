/**
 * Payload parts built once per recording. The events of one batch show the same records many
 * times over: an instalment's three events (charge.succeeded, debt-account.update,
 * payment-plan.update) embed its account some twenty times (the account's ten latest charges
 * and transactions each embed it), its charge twice, its plan and method twice. A part is built
 * the first time it is asked for and the same object is shown wherever it appears after, so
 * every part must be a function of its record and the recording's rows alone, and is never
 * changed once built: a payload that shows it otherwise makes a copy (`{ ...part, … }`).
 */
export interface Built {
  /** The parts built so far in this recording, by kind and record id (PayloadRows.built). */
  built: Map<string, unknown>;
}

/** The part `key` (a kind and a record id) of this recording, built by `build` the first time. */
export function builtOnce<T>(ctx: Built, key: string, build: () => T): T {
  const known = ctx.built.get(key);
  if (known !== undefined) return known as T;
  const part = build();
  ctx.built.set(key, part);
  return part;
}
