/**
 * The examples of both documents, all of them (what the mock answers, what test deliveries
 * send, what the reference shows): each passes its own schema, and together they tell one
 * story, so every id an example names is a record some example shows.
 */
import { apiDocument, operations, portalDocument, type DocumentView } from '../support/document';
import { decryptWebhookData } from '../../client';
import { secretProblem } from '../../server/webhooks/signing';

type Json = Record<string, unknown>;

interface Found {
  view: DocumentView;
  /** The schema the value must pass, as a pointer into the document. */
  pointer: string;
  value: unknown;
  where: string;
  /** A media type's example is held to the closed schema (no property the document does not name). */
  strict: boolean;
}

const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** Every example of a document: of media types and parameters (`example`, and each of `examples`), and of schemas. */
function examplesOf(view: DocumentView): Found[] {
  const found: Found[] = [];
  const visit = (node: unknown, pointer: string): void => {
    if (Array.isArray(node)) return node.forEach((item, i) => visit(item, `${pointer}/${i}`));
    if (!node || typeof node !== 'object') return;
    const object = node as Json;
    if ('schema' in object && object.schema && typeof object.schema === 'object') {
      const strict = pointer.includes('/content/');
      if ('example' in object) found.push({ view, pointer: `#${pointer}/schema`, value: object.example, where: pointer, strict });
      for (const [name, raw] of Object.entries((object.examples as Json | undefined) ?? {})) {
        found.push({ view, pointer: `#${pointer}/schema`, value: view.resolve<Json>(raw).value, where: `${pointer} (${name})`, strict });
      }
    } else if ('example' in object && ('type' in object || '$ref' in object || 'allOf' in object || 'oneOf' in object || 'properties' in object)) {
      found.push({ view, pointer: `#${pointer}`, value: object.example, where: pointer, strict: false });
    }
    for (const [key, value] of Object.entries(object)) {
      if (key !== 'example' && key !== 'examples') visit(value, `${pointer}/${escape(key)}`);
    }
  };
  visit(view.document, '');
  return found;
}

const all = [...examplesOf(apiDocument), ...examplesOf(portalDocument)];

test('the documents have examples to check (every webhook and operation has some)', () => {
  expect(all.filter((example) => example.view === apiDocument && example.where.startsWith('/webhooks/')).length).toBe(Object.keys(apiDocument.document.webhooks as Json).length);
  expect(all.length).toBeGreaterThan(500);
});

test('every example passes its own schema', () => {
  const failures = all.flatMap(({ view, pointer, value, where, strict }) =>
    (strict ? view.strictSchemaErrors(pointer, value) : view.schemaErrors(pointer, value)).map((error) => `${view.name} ${where}: ${error}`),
  );
  expect(failures).toEqual([]);
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Every `[key, value]` of a JSON value, at any depth. */
function* entries(value: unknown, key = ''): Generator<[string, unknown, unknown]> {
  if (Array.isArray(value)) for (const item of value) yield* entries(item, key);
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) {
    yield [k, v, value];
    yield* entries(v, k);
  }
}

test('every id an example names is a record some example shows (one customer, account, charge… everywhere)', () => {
  const records = new Set<string>();
  // A bulk action's own id is its `bulk_id`, as POST /bulk answers it.
  const ownId = (key: string, where: string) => key === 'id' || (key === 'bulk_id' && where.startsWith('/paths/~1bulk/post/responses/'));
  for (const { value, where } of all) for (const [key, id] of entries(value)) if (ownId(key, where) && typeof id === 'string' && UUID.test(id)) records.add(id);
  const dangling = new Set<string>();
  for (const { value, view, where } of all) {
    for (const [key, id] of entries(value)) {
      if (!ownId(key, where) && /(_id|_uuid)$/.test(key) && typeof id === 'string' && UUID.test(id) && !records.has(id)) dangling.add(`${key} ${id} (${view.name} ${where})`);
    }
  }
  expect([...dangling]).toEqual([]);
});

/** A media type's examples by name (`example` alone is named `example`). */
function namedExamples(view: DocumentView, media: Json | undefined): [string, unknown][] {
  if (!media) return [];
  if ('example' in media) return [['example', media.example]];
  return Object.entries((media.examples as Json | undefined) ?? {}).map(([name, raw]) => [name, view.resolve<Json>(raw).value]);
}

// A refund's `amount` is what it gives back: the charge answers it as `refunded_amount`.
const ANSWERED_AS: Record<string, Record<string, string>> = { refundCharge: { amount: 'refunded_amount' } };

test("each answer echoes its example request: a value the request sends is the answer's (amounts, dates, frequency, a card's last four)", () => {
  const disagreements: string[] = [];
  for (const operation of operations()) {
    const requests = namedExamples(operation.view, (operation.requestBody?.content as Record<string, Json> | undefined)?.['application/json']);
    const status = Object.keys(operation.responses).find((code) => /^2\d\d$/.test(code));
    if (!status) continue;
    const answers = namedExamples(operation.view, (operation.view.resolve<Json>(operation.responses[status]).content as Record<string, Json> | undefined)?.['application/json']);
    for (const [index, [name, sent]] of requests.entries()) {
      // The answer of the same name; the first request's, else, is the one Prism gives (the first).
      const answer = answers.find(([answerName]) => answerName === name) ?? (index === 0 ? answers[0] : undefined);
      const data = (answer?.[1] as { data?: Json } | undefined)?.data;
      if (!sent || Array.isArray(sent) || typeof sent !== 'object' || !data || Array.isArray(data)) continue;
      const body = sent as Json;
      const where = `${operation.operationId} (${name})`;
      const last4 = (body.card as Json | undefined)?.card_number;
      const answered = (data.card as Json | undefined)?.card_number ?? ((data.charge as Json | undefined)?.card as Json | undefined)?.card_number;
      if (typeof last4 === 'string' && answered !== undefined && answered !== last4.slice(-4)) disagreements.push(`${where}: card ${last4} answered ${String(answered)}`);
      for (const [key, value] of Object.entries(body)) {
        const field = ANSWERED_AS[operation.operationId]?.[key] ?? key;
        const echoed = field in data ? data[field] : (data.charge as Json | undefined)?.[field];
        if (echoed === undefined || value === null || typeof value === 'object' || /_id$/.test(key)) continue;
        if (echoed !== value) disagreements.push(`${where}: ${key} sent ${JSON.stringify(value)}, answered ${JSON.stringify(echoed)}`);
      }
    }
  }
  expect(disagreements).toEqual([]);
});

describe('secrets in the examples', () => {
  const text = JSON.stringify([apiDocument.document, portalDocument.document]);
  const secrets = [...new Set(text.match(/whsec_[A-Za-z0-9+/]{8,}=*/g) ?? [])];

  test('every whsec_ secret the documents show is one POST /webhooks accepts', () => {
    expect(secrets.length).toBeGreaterThan(0);
    expect(secrets.map((secret) => [secret, secretProblem(secret) ?? 'accepted'])).toEqual(secrets.map((secret) => [secret, 'accepted']));
  });

  test("external-charge.create's encrypted example decrypts, with the client's helper and the secret it names, to a valid ExternalCharge", () => {
    const event = ((apiDocument.document.webhooks as Json)['external-charge.create'] as Json).post as Json;
    const secret = String(event.description).match(/`(whsec_[^`]+)`/)![1]!;
    const example = apiDocument.resolve<Json>((apiDocument.document.components as Json & { examples: Json }).examples.ExternalChargeCreateEvent).value as { data: string };
    const decrypted = decryptWebhookData(example.data, secret);
    expect(apiDocument.strictSchemaErrors('#/components/schemas/ExternalCharge', decrypted)).toEqual([]);
    expect(decrypted).toMatchObject({ status: 'recorded', amount: expect.any(Number) });
  });
});
