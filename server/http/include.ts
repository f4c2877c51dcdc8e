import { ApiError } from '../kernel/errors';

/**
 * The `include` query parameter: absent, the resource's default set; given, it replaces the
 * default set. A dotted value (`debt_accounts.location`) also includes its parent. The
 * document's pattern has already rejected unknown values; this checks again for safety.
 */
export function parseInclude(raw: unknown, allowed: readonly string[], defaults: readonly string[]): Set<string> {
  if (raw === undefined) return new Set(defaults);
  const values = String(raw)
    .split(',')
    .filter((value) => value !== '');
  const unknown = values.filter((value) => !allowed.includes(value));
  if (unknown.length > 0) throw ApiError.field('query.include', `unknown value(s): ${unknown.join(', ')}`);
  const included = new Set<string>();
  for (const value of values) {
    included.add(value);
    const dot = value.indexOf('.');
    if (dot > 0) included.add(value.slice(0, dot));
  }
  return included;
}
