/**
 * What the hostile suite does to a valid request: a plan of one to three changes, each to the
 * path, the query, a header or the body, drawn from values that broke or could break a
 * server (NUL, lone surrogates, prototype keys, huge and non-finite numbers, deep nesting,
 * wrong types, corrupt encodings, odd Host).
 */
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import type { RawRequest } from '../../support/raw-http';
import type { TestApp } from '../../support/test-app';
import type { Fixtures } from './fixtures';
import type { Operation } from './operations';

/** JSON text put into a body as is: numbers JSON.stringify cannot write (1e309), nesting, junk. */
class RawJson {
  constructor(readonly text: string) {}
  toString() {
    return `RawJson(${this.text.slice(0, 40)})`;
  }
}

export type Plan =
  | { kind: 'path'; index: number; segment: string }
  | { kind: 'query'; name: string; value: string; twice: boolean }
  | { kind: 'header'; name: string; value: string }
  | { kind: 'body-value'; index: number; value: unknown }
  | { kind: 'body-key'; index: number; key: string; value: unknown }
  | { kind: 'body-raw'; text: string }
  | { kind: 'encoding'; encoding: string; mode: 'plain' | 'truncated' | 'gzip-of-junk' };

const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'prototype', '__defineGetter__'];

/** Path segments, already percent-encoded as they go on the wire. */
const SEGMENTS = [
  '%00', 'a%00b', '%ED%A0%80', '%ED%B0%80x', '%E0%A4%A', '%', '%ZZ', '%FF', '%C0%AF', '..', '%2e%2e', '%2F', '.', '%20',
  ...PROTOTYPE_KEYS, 'x'.repeat(256), 'x'.repeat(5000), '1e309', 'Infinity', '-1', 'null', 'undefined', 'true',
  '00000000-0000-0000-0000-000000000000', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF', '9b2f6c1e-8d4a-4f7e-9a53-2c1d0e6b7a4', '%C3%A9', "'%20OR%201=1--", '*', ';', '%3B',
];

/** Query values, percent-encoded or deliberately not. */
const QUERY_VALUES = [
  '', '%00', 'a%00b', '%ED%A0%80', '%E0%A4%A', '%', '1e309', '-1e309', 'Infinity', '-Infinity', 'NaN', '0', '-0', '-1', '1.5', '0x10', '1e3', '9007199254740993',
  '2147483648', '9'.repeat(400), 'true', 'null', '[]', '{}', 'metadata,,addresses', 'metadata,metadata', ',', 'customer,', 'a'.repeat(5000), ...PROTOTYPE_KEYS,
  'phone_ssn_last4', '(512)%20555-0147', "O'Brien", '%2C', '+', 'a+b', '%25', '&', '=',
];

const QUERY_NAMES = [...PROTOTYPE_KEYS, 'page[]', 'limit[]', 'include[]', 'a%00b', '%ED%A0%80', '', '%', 'page.x', 'x'.repeat(300)];

const HEADERS: [string, string[]][] = [
  ['host', ['a b', 'a:b:c', '[::1', '', 'exa mple.example', '127.0.0.1:99999', 'x'.repeat(300), '\xfcml\xe4ut.example', 'a/b', 'a?b', 'a#b', 'evil.example', '%00', '..']],
  ['authorization', ['bearer TOKEN', 'BEARER TOKEN', 'Bearer', 'Bearer ', 'Basic Zm9vOmJhcg==', 'Bearer TOKEN TOKEN', `Bearer ${'a'.repeat(600)}`, 'Bearer \xff', 'Bearer TOKENx', '']],
  ['content-type', ['text/plain', 'application/json; charset=latin1', 'application/json; charset=utf-16', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/vnd.api+json', '*/*', '', 'application/json;;;', 'application/json; charset="utf-8"', 'application/json; charset=nonsense']],
  ['accept', ['text/html', 'application/xml', '*/*;q=abc', '']],
  ['x-forwarded-host', ['evil.example', 'a b']],
  ['x-forwarded-proto', ['javascript', 'https, http']],
  ['accept-encoding', ['gzip;q=nan', 'br, zstd, x']],
];

const DEEP = 5000;
/** Values a body field is set to. */
const BODY_VALUES: unknown[] = [
  'a\u0000b', '\u0000', '\ud800', 'x\udc00y', '\udbff\udfff', '', ' ', 'x'.repeat(70_000), '1e309', 'null', '\u202e\u0000',
  new RawJson('1e309'), new RawJson('-1e309'), new RawJson('1e-400'), new RawJson('9007199254740993'), new RawJson('-0'), new RawJson('123456789012345678901234567890'),
  1.5, 0, -1, 2147483648, 1e20, -1e20, Number.MAX_SAFE_INTEGER, true, false, null, [], [null], {}, [1, 'a', {}],
  new RawJson(`${'['.repeat(DEEP)}${']'.repeat(DEEP)}`), new RawJson(`${'{"a":'.repeat(DEEP)}1${'}'.repeat(DEEP)}`),
  new RawJson('{"__proto__":{"polluted":true}}'), new RawJson('{"constructor":{"prototype":{"polluted":true}}}'), new RawJson('{"toString":1,"valueOf":"x"}'),
  new RawJson(`[${Array.from({ length: 2000 }, () => '"x"').join(',')}]`),
];

/** Whole bodies that are no JSON at all, or JSON of the wrong kind. */
const RAW_BODIES = [
  '', '{', '{"a":1,}', '{"a":1}}', "{'a':1}", 'null', '[]', '"text"', '1e309', 'true', `${'['.repeat(100_000)}`, `${'['.repeat(DEEP)}${']'.repeat(DEEP)}`,
  '\ufeff{}', '{"name":"a","name":"b"}', '\u0000', '{"a":"\\ud800"}', '{"a":"\\u0000"}', '{"__proto__":{"admin":true}}', 'NaN', '{"a":NaN}', '{"a":Infinity}',
  'x'.repeat(1000), '\xff\xfe{\x00}\x00', '<html></html>', '<?xml version="1.0"?><a/>',
];

export function planArbitrary(operation: Operation): fc.Arbitrary<Plan[]> {
  const names = operation.query.length > 0 ? [...operation.query, ...QUERY_NAMES] : QUERY_NAMES;
  const bodyValue = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...BODY_VALUES) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
    { weight: 1, arbitrary: fc.double() },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  );
  const plan: fc.Arbitrary<Plan> = fc.oneof(
    fc.record({ kind: fc.constant('path' as const), index: fc.nat(), segment: fc.constantFrom(...SEGMENTS) }),
    fc.record({ kind: fc.constant('query' as const), name: fc.constantFrom(...names), value: fc.oneof(fc.constantFrom(...QUERY_VALUES), fc.string({ unit: 'binary', maxLength: 12 }).map(looseEncode)), twice: fc.boolean() }),
    fc.constantFrom(...HEADERS).chain(([name, values]) => fc.record({ kind: fc.constant('header' as const), name: fc.constant(name), value: fc.constantFrom(...values) })),
    fc.record({ kind: fc.constant('body-value' as const), index: fc.nat(), value: bodyValue }),
    fc.record({ kind: fc.constant('body-key' as const), index: fc.nat(), key: fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS, 'a\u0000', '\ud800', ''), fc.string({ maxLength: 8 })), value: bodyValue }),
    fc.record({ kind: fc.constant('body-raw' as const), text: fc.constantFrom(...RAW_BODIES) }),
    fc.record({ kind: fc.constant('encoding' as const), encoding: fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'zstd', 'gzip, gzip', 'GZIP'), mode: fc.constantFrom('plain' as const, 'truncated' as const, 'gzip-of-junk' as const) }),
  );
  return fc.array(plan, { minLength: 1, maxLength: 3 });
}

/** Percent-encodes what encodeURIComponent can, and a lone surrogate as the bytes it would have been. */
function looseEncode(text: string): string {
  let out = '';
  for (const char of text) {
    try {
      out += encodeURIComponent(char);
    } catch {
      out += '%ED%A0%80';
    }
  }
  return out;
}

/** A fresh copy of a plan's value: the constants are shared by every run and must not be changed or nested in themselves. */
function copy(value: unknown): unknown {
  if (value instanceof RawJson || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copy);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) Object.defineProperty(out, key, { value: copy(item), enumerable: true, configurable: true, writable: true });
  return out;
}

/** JSON text of `value`, with RawJson written as is and own `__proto__` keys kept. */
function serialize(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(serialize).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}:${serialize(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

interface Slot {
  holder: Record<string, unknown> | unknown[];
  key: string | number;
}

/** Every place in a body a value sits, and every object in it. */
function slots(body: unknown): { values: Slot[]; objects: Record<string, unknown>[] } {
  const values: Slot[] = [];
  const objects: Record<string, unknown>[] = [];
  const visit = (node: unknown) => {
    if (node instanceof RawJson) return;
    if (Array.isArray(node)) node.forEach((item, index) => (values.push({ holder: node, key: index }), visit(item)));
    else if (node !== null && typeof node === 'object') {
      objects.push(node as Record<string, unknown>);
      for (const [key, item] of Object.entries(node)) values.push({ holder: node as Record<string, unknown>, key }), visit(item);
    }
  };
  visit(body);
  return { values, objects };
}

/** The document's example on the suite's data: ids that exist, so a request gets past the lookups. */
function exampleBody(example: unknown, fixtures: Fixtures): unknown {
  const body = structuredClone(example);
  const replace = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(replace);
    else if (node !== null && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      if ('customer_id' in record && typeof record.customer_id === 'string') record.customer_id = fixtures.customerId;
      if ('debt_account_id' in record && typeof record.debt_account_id === 'string') record.debt_account_id = fixtures.accountId;
      if ('location_id' in record && typeof record.location_id === 'string') record.location_id = fixtures.locationId;
      delete record.debt_account_dispute_id;
      Object.values(record).forEach(replace);
    }
  };
  replace(body);
  return body;
}

const PATH_VALUES = (fixtures: Fixtures, template: string): Record<string, string> => ({
  id: template.includes('/customers/') ? fixtures.customerId
    : template.includes('/debt-accounts/') ? fixtures.accountId
    : template.includes('/locations/') ? fixtures.locationId
    : template.includes('/webhooks/') ? fixtures.webhookId
    : fixtures.bulkId,
  addressId: fixtures.addressId,
  webhook_uuid: fixtures.webhookId,
  delivery_id: fixtures.deliveryId,
  token: fixtures.token,
  accountId: fixtures.accountId,
  disputeId: '7c0d5e3a-2b1f-4c9d-8e6a-5f4b3a2c1d0e',
  code: fixtures.code,
});

/** The request a plan makes of an operation: the valid one first, then each change in turn. */
export function render(operation: Operation, plans: Plan[], fixtures: Fixtures, app: TestApp): RawRequest {
  const values = PATH_VALUES(fixtures, operation.template);
  const segments = operation.template.split('/').map((segment) => segment.replace(/^\{(\w+)\}$/, (_all, name: string) => values[name] ?? 'x'));
  const query: [string, string][] = [];
  const headers: Record<string, string> = { authorization: `Bearer ${app.organization.production_token}` };
  let body: unknown = operation.example === undefined ? undefined : exampleBody(operation.example, fixtures);
  let text: string | undefined;
  let encoding: Extract<Plan, { kind: 'encoding' }> | undefined;

  for (const plan of plans) {
    switch (plan.kind) {
      case 'path': {
        // Any segment after the empty first one: the base, a literal or a parameter.
        const index = 1 + (plan.index % (segments.length - 1));
        segments[index] = plan.segment;
        break;
      }
      case 'query':
        query.push([plan.name, plan.value]);
        if (plan.twice) query.push([plan.name, plan.value]);
        break;
      case 'header':
        headers[plan.name] = plan.name === 'authorization' ? plan.value.replace('TOKEN', app.organization.production_token) : plan.value;
        break;
      case 'body-value': {
        body ??= {};
        const { values: places } = slots(body);
        if (places.length === 0) body = copy(plan.value);
        else {
          const { holder, key } = places[plan.index % places.length]!;
          Object.defineProperty(holder, key, { value: copy(plan.value), enumerable: true, configurable: true, writable: true });
        }
        break;
      }
      case 'body-key': {
        body ??= {};
        const { objects } = slots(body);
        // defineProperty: a key named __proto__ becomes a key, as JSON.parse would make it.
        if (objects.length > 0) Object.defineProperty(objects[plan.index % objects.length]!, plan.key, { value: copy(plan.value), enumerable: true, configurable: true, writable: true });
        break;
      }
      case 'body-raw':
        text = plan.text;
        break;
      case 'encoding':
        encoding = plan;
        break;
    }
  }

  const path = segments.join('/') + (query.length > 0 ? `?${query.map(([name, value]) => `${name}=${value}`).join('&')}` : '');
  text ??= body === undefined ? undefined : serialize(body);
  let bytes = text === undefined ? undefined : Buffer.from(text, text.includes('\xff\xfe') ? 'latin1' : 'utf8');
  if (bytes !== undefined || encoding) {
    headers['content-type'] ??= 'application/json';
    if (encoding) {
      bytes ??= Buffer.from('{}');
      headers['content-encoding'] = encoding.encoding;
      if (encoding.mode === 'truncated') bytes = gzipSync(bytes).subarray(0, Math.max(1, Math.floor(bytes.length / 2)));
      if (encoding.mode === 'gzip-of-junk') bytes = gzipSync(Buffer.from('\xff\xfe not json', 'latin1'));
    }
    headers['content-length'] = String(bytes!.length);
  }
  return { method: operation.method, path, headers, body: bytes };
}
