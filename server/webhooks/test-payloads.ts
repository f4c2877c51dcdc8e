/**
 * Fake data for test deliveries (spec 4.7), generated from the document's webhook entries:
 * the example of the event's request body (a named example of `components/examples`), which `npm run lint:spec` checks against the
 * event's schema, or, for an event without one, openapi-sampler's sample of the schema
 * (the sampler ignores `pattern`, so it is only the fallback). Then every `id`, `uuid` and
 * `*_uuid` property, at any depth, becomes null: the data is stored nowhere and names nothing.
 */
import { sample } from 'openapi-sampler';
import { loadDocument } from '../http/validator';
import { decryptEventData } from './signing';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

// The document encrypts its external-charge.create example with this secret (see that entry).
const EXAMPLE_SECRET = 'whsec_9oXeCqkQ3cmH0y1pT2bV5wAzR6sN8dGjLfK4uEhMi7Y=';

export function nullIds(value: Json): Json {
  if (Array.isArray(value)) return value.map(nullIds);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [key, key === 'id' || key === 'uuid' || key.endsWith('_uuid') ? null : nullIds(inner)]),
  );
}

let cache: Map<string, Json> | undefined;

function generate(): Map<string, Json> {
  const document = loadDocument() as unknown as {
    webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: object; example?: Json; examples?: Record<string, { $ref: string }> }> } } }>;
    components: { examples: Record<string, { value: Json }> };
  };
  const payloads = new Map<string, Json>();
  for (const [event, entry] of Object.entries(document.webhooks)) {
    const media = entry.post.requestBody.content['application/json']!;
    // Each event's example is a named one of components/examples, referenced by the entry.
    const named = Object.values(media.examples ?? {})[0]?.$ref.replace('#/components/examples/', '');
    const example = media.example ?? (named === undefined ? undefined : document.components.examples[named]?.value);
    const body = (example ?? sample(media.schema as never, { skipReadOnly: true, quiet: true }, document as never)) as { data: Json };
    let data = body.data;
    // The encrypted event's example is ciphertext; the data object is what it decrypts to.
    if (event === 'external-charge.create' && typeof data === 'string') data = decryptEventData(data, EXAMPLE_SECRET) as Json;
    // A tracking payload names its own event.
    if (data && typeof data === 'object' && !Array.isArray(data) && 'event' in data && 'trackables' in data) data = { ...data, event };
    payloads.set(event, nullIds(data));
  }
  return payloads;
}

/** The `data` of a test delivery of `event`. */
export function testPayload(event: string): Json {
  cache ??= generate();
  return cache.get(event) ?? null;
}
