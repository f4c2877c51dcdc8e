/**
 * Metadata update semantics (spec 2.1, 2.2): a different value replaces; an empty value
 * ("" or null) deletes that key; an empty whole ({} or null) deletes everything.
 */
export type MetadataUpdate = Record<string, string | null> | null;

export function mergeMetadata(current: Record<string, string>, update: MetadataUpdate | undefined): Record<string, string> {
  if (update === undefined) return current;
  if (update === null || Object.keys(update).length === 0) return {};
  const next = { ...current };
  for (const [key, value] of Object.entries(update)) {
    if (value === null || value === '') delete next[key];
    else next[key] = value;
  }
  return next;
}
