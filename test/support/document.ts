/** The bundled document as tests read it: its operations, their examples, and a schema check. */
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { loadDocument } from '../../server/http/validator';

type Json = Record<string, unknown>;
export const document = loadDocument() as unknown as Json;

export const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
export type Method = (typeof METHODS)[number];

/** Follows local $refs such as #/components/responses/NotFound. */
export function resolve<T = Json>(node: unknown): T {
  let current = node as Json;
  while (current && typeof current.$ref === 'string') {
    current = current.$ref
      .slice(2)
      .split('/')
      .reduce<Json>((at, key) => at[key.replace(/~1/g, '/').replace(/~0/g, '~')] as Json, document);
  }
  return current as T;
}

export interface Operation {
  path: string;
  method: Method;
  operationId: string;
  tag: string;
  /** The path item's methods: a method outside them is a wrong method for this path. */
  pathMethods: Method[];
  parameters: Json[];
  responses: Json;
  requestBody?: Json;
}

export function operations(): Operation[] {
  const list: Operation[] = [];
  for (const [path, raw] of Object.entries(document.paths as Json)) {
    const item = resolve(raw);
    const pathMethods = METHODS.filter((method) => item[method]);
    for (const method of pathMethods) {
      const operation = item[method] as Json;
      list.push({
        path,
        method,
        operationId: operation.operationId as string,
        tag: (operation.tags as string[])[0]!,
        pathMethods,
        parameters: [...((item.parameters as Json[]) ?? []), ...((operation.parameters as Json[]) ?? [])].map((p) => resolve(p)),
        responses: operation.responses as Json,
        requestBody: operation.requestBody ? resolve(operation.requestBody) : undefined,
      });
    }
  }
  return list;
}

/** The example of a media type: `example`, else the first of `examples`. */
export function exampleOf(media: Json | undefined): unknown {
  if (!media) return undefined;
  if ('example' in media) return media.example;
  const first = Object.values((media.examples as Json) ?? {})[0];
  return first === undefined ? undefined : resolve<Json>(first).value;
}

/** Whether `status` is one the operation lists, exactly or by its range (`4XX`). */
export function lists(operation: Operation, status: number): boolean {
  const keys = Object.keys(operation.responses);
  return keys.includes(String(status)) || keys.includes(`${String(status)[0]}XX`);
}

let ajv: Ajv2020 | undefined;

/** The errors of `value` against the schema at `pointer` of the document (`#/components/schemas/Error`); [] when it conforms. */
export function schemaErrors(pointer: string, value: unknown): string[] {
  if (!ajv) {
    ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(ajv);
    ajv.addSchema(document, 'document');
  }
  const ref = `document${pointer}`;
  const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
  return validate(value) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
}

/** The pointer of an operation's response schema for `status` (`application/json`), if it has a body. */
export function responseSchemaPointer(operation: Operation, status: number): string | undefined {
  const key = operation.responses[String(status)] ? String(status) : `${String(status)[0]}XX`;
  const raw = operation.responses[key] as Json | undefined;
  if (!raw) return undefined;
  const escaped = operation.path.replace(/~/g, '~0').replace(/\//g, '~1');
  const base = typeof raw.$ref === 'string' ? (raw.$ref as string).slice(1) : `/paths/${escaped}/${operation.method}/responses/${key}`;
  const response = resolve(raw);
  if (!(response.content as Json | undefined)?.['application/json']) return undefined;
  return `#${base}/content/application~1json/schema`;
}

/**
 * The document with every object schema closed (`unevaluatedProperties: false`) where it
 * names its properties and says nothing about others: a value checked against it may hold no
 * property the document does not name. Parts of an `allOf` stay open, so that the whole
 * composition is what closes.
 */
function closedDocument(): Json {
  const copy = structuredClone(document);
  const members = new Set<unknown>();
  const collect = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(collect);
    if (!node || typeof node !== 'object') return;
    const schema = node as Json;
    if (Array.isArray(schema.allOf)) for (const part of schema.allOf) members.add(typeof (part as Json).$ref === 'string' ? resolveIn(copy, (part as Json).$ref as string) : part);
    Object.values(schema).forEach(collect);
  };
  const close = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(close);
    if (!node || typeof node !== 'object') return;
    const schema = node as Json;
    const named = schema.properties !== undefined || Array.isArray(schema.allOf);
    if (named && !members.has(schema) && !('additionalProperties' in schema) && !('unevaluatedProperties' in schema)) schema.unevaluatedProperties = false;
    Object.entries(schema).forEach(([key, value]) => {
      if (key !== 'example' && key !== 'examples' && !key.startsWith('x-')) close(value);
    });
  };
  collect(copy);
  close(copy);
  return copy;
}

function resolveIn(root: Json, ref: string): unknown {
  return ref
    .slice(2)
    .split('/')
    .reduce<Json>((at, key) => at[key.replace(/~1/g, '/').replace(/~0/g, '~')] as Json, root);
}

let strict: Ajv2020 | undefined;

/** As schemaErrors, and any property the document does not name is an error too. */
export function strictSchemaErrors(pointer: string, value: unknown): string[] {
  if (!strict) {
    strict = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(strict);
    strict.addSchema(closedDocument(), 'closed');
  }
  const ref = `closed${pointer}`;
  const validate = strict.getSchema(ref) ?? strict.compile({ $ref: ref });
  return validate(value) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message} ${JSON.stringify(error.params)}`);
}
