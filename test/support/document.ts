/**
 * The bundled documents as tests read them: their operations, their examples, and a schema
 * check. Two documents: the integrators' API (generated/openapi.json, `apiDocument`) and the
 * Portal (generated/portal.json, `portalDocument`); each resolves its own `$ref`s. The plain
 * exports (`document`, `resolve`, `schemaErrors`, ...) are the API's.
 */
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { loadDocument, loadPortalDocument, portalBaseOf, type PortalBase } from '../../server/http/validator';

type Json = Record<string, unknown>;

export const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
export type Method = (typeof METHODS)[number];

/** Where an operation is served: under /api/v1, or at one of the Portal document's two bases. */
export type Base = 'api' | PortalBase;

export interface Operation {
  path: string;
  method: Method;
  operationId: string;
  tag: string;
  base: Base;
  /** The document the operation is in: resolve its refs and check its answers with it. */
  view: DocumentView;
  /** The path item's methods: a method outside them is a wrong method for this path. */
  pathMethods: Method[];
  parameters: Json[];
  responses: Json;
  requestBody?: Json;
}

export class DocumentView {
  private ajv: Ajv2020 | undefined;
  private strict: Ajv2020 | undefined;

  constructor(
    readonly name: 'api' | 'portal',
    readonly document: Json,
  ) {}

  /** Follows local $refs such as #/components/responses/NotFound. */
  resolve<T = Json>(node: unknown): T {
    return resolveIn<T>(this.document, node);
  }

  operations(): Operation[] {
    const list: Operation[] = [];
    for (const [path, raw] of Object.entries(this.document.paths as Json)) {
      const item = this.resolve(raw);
      const pathMethods = METHODS.filter((method) => item[method]);
      for (const method of pathMethods) {
        const operation = item[method] as Json;
        list.push({
          path,
          method,
          operationId: operation.operationId as string,
          tag: (operation.tags as string[])[0]!,
          base: this.name === 'api' ? 'api' : portalBaseOf(item, operation),
          view: this,
          pathMethods,
          parameters: [...((item.parameters as Json[]) ?? []), ...((operation.parameters as Json[]) ?? [])].map((p) => this.resolve(p)),
          responses: operation.responses as Json,
          requestBody: operation.requestBody ? this.resolve(operation.requestBody) : undefined,
        });
      }
    }
    return list;
  }

  /** The example of a media type: `example`, else the first of `examples`. */
  exampleOf(media: Json | undefined): unknown {
    if (!media) return undefined;
    if ('example' in media) return media.example;
    const first = Object.values((media.examples as Json) ?? {})[0];
    return first === undefined ? undefined : this.resolve<Json>(first).value;
  }

  /** The errors of `value` against the schema at `pointer` of the document (`#/components/schemas/Error`); [] when it conforms. */
  schemaErrors(pointer: string, value: unknown): string[] {
    if (!this.ajv) {
      this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
      addFormats(this.ajv);
      this.ajv.addSchema(this.document, 'document');
    }
    const ref = `document${pointer}`;
    const validate = this.ajv.getSchema(ref) ?? this.ajv.compile({ $ref: ref });
    return validate(value) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
  }

  /** As schemaErrors, and any property the document does not name is an error too. */
  strictSchemaErrors(pointer: string, value: unknown): string[] {
    if (!this.strict) {
      this.strict = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
      addFormats(this.strict);
      this.strict.addSchema(closedDocument(this.document), 'closed');
    }
    const ref = `closed${pointer}`;
    const validate = this.strict.getSchema(ref) ?? this.strict.compile({ $ref: ref });
    return validate(value) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message} ${JSON.stringify(error.params)}`);
  }
}

export const apiDocument = new DocumentView('api', loadDocument() as unknown as Json);
export const portalDocument = new DocumentView('portal', loadPortalDocument() as unknown as Json);

/** The API document. */
export const document = apiDocument.document;

/** Follows local $refs of the API document. */
export function resolve<T = Json>(node: unknown): T {
  return apiDocument.resolve<T>(node);
}

/** Every operation of both documents, the API's first. */
export function operations(): Operation[] {
  return [...apiDocument.operations(), ...portalDocument.operations()];
}

/** The example of a media type of the API document: `example`, else the first of `examples`. */
export function exampleOf(media: Json | undefined): unknown {
  return apiDocument.exampleOf(media);
}

/** Whether `status` is one the operation lists, exactly or by its range (`4XX`). */
export function lists(operation: Operation, status: number): boolean {
  const keys = Object.keys(operation.responses);
  return keys.includes(String(status)) || keys.includes(`${String(status)[0]}XX`);
}

/** The errors of `value` against the schema at `pointer` of the API document; [] when it conforms. */
export function schemaErrors(pointer: string, value: unknown): string[] {
  return apiDocument.schemaErrors(pointer, value);
}

/** The pointer of an operation's response schema for `status` (`application/json`), if it has a body. */
export function responseSchemaPointer(operation: Operation, status: number): string | undefined {
  const key = operation.responses[String(status)] ? String(status) : `${String(status)[0]}XX`;
  const raw = operation.responses[key] as Json | undefined;
  if (!raw) return undefined;
  const escaped = operation.path.replace(/~/g, '~0').replace(/\//g, '~1');
  const base = typeof raw.$ref === 'string' ? (raw.$ref as string).slice(1) : `/paths/${escaped}/${operation.method}/responses/${key}`;
  const response = operation.view.resolve(raw);
  if (!(response.content as Json | undefined)?.['application/json']) return undefined;
  return `#${base}/content/application~1json/schema`;
}

/**
 * The document with every object schema closed (`unevaluatedProperties: false`) where it
 * names its properties and says nothing about others: a value checked against it may hold no
 * property the document does not name. Parts of an `allOf` stay open, so that the whole
 * composition is what closes.
 */
function closedDocument(document: Json): Json {
  const copy = structuredClone(document);
  const members = new Set<unknown>();
  const collect = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(collect);
    if (!node || typeof node !== 'object') return;
    const schema = node as Json;
    if (Array.isArray(schema.allOf)) for (const part of schema.allOf) members.add(typeof (part as Json).$ref === 'string' ? resolveIn(copy, part) : part);
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

function resolveIn<T = Json>(root: Json, node: unknown): T {
  let current = node as Json;
  while (current && typeof current.$ref === 'string') {
    current = current.$ref
      .slice(2)
      .split('/')
      .reduce<Json>((at, key) => at[key.replace(/~1/g, '/').replace(/~0/g, '~')] as Json, root);
  }
  return current as T;
}

/** As schemaErrors of the API document, and any property the document does not name is an error too. */
export function strictSchemaErrors(pointer: string, value: unknown): string[] {
  return apiDocument.strictSchemaErrors(pointer, value);
}
