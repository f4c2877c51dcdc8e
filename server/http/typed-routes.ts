/**
 * Routes typed from the document, as Backstage's generated routers are: a handler registered
 * for `('/customers/{id}', 'get')` gets `req.params`, `req.body` and `req.query` and answers
 * `res.json` in the types of `paths['/customers/{id}']['get']` from `generated/`. A body, a
 * parameter or an answer that drifts from the document fails `tsc`, not a test at run time.
 *
 * Query values are typed as the strings Express hands over (the validator has checked them
 * against the document; a route converts what it needs).
 */
import type { Request, RequestHandler, Response } from 'express';
import type { paths } from '../../generated/schema';

type Method = 'get' | 'post' | 'put' | 'delete';

/** The document's paths that have an operation for `M`. */
export type PathOf<M extends Method> = { [P in keyof paths]: paths[P][M] extends undefined | never ? never : P }[keyof paths];

type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;

type PathParams<O> = O extends { parameters: { path: infer X } } ? (X extends Record<string, unknown> ? { [K in keyof X]: string } : Record<never, never>) : Record<never, never>;
type QueryParams<O> = O extends { parameters: { query?: infer Q } } ? (Q extends Record<string, unknown> ? { [K in keyof Q]?: string } : Record<never, never>) : Record<never, never>;
type Body<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type Success<R> = { [S in keyof R]: S extends 200 | 201 | 202 ? (R[S] extends { content: { 'application/json': infer J } } ? J : never) : never }[keyof R];
type Answer<O> = O extends { responses: infer R } ? Success<R> : never;

export type TypedRequest<P extends keyof paths, M extends Method> = Request<
  PathParams<Operation<P, M>>,
  Answer<Operation<P, M>>,
  Body<Operation<P, M>>,
  QueryParams<Operation<P, M>>
>;
export type TypedResponse<P extends keyof paths, M extends Method> = Response<Answer<Operation<P, M>>>;

type Handler<P extends keyof paths, M extends Method> = (req: TypedRequest<P, M>, res: TypedResponse<P, M>) => Promise<void>;

export interface TypedRoutes {
  get<P extends PathOf<'get'>>(path: P, handler: Handler<P, 'get'>): void;
  post<P extends PathOf<'post'>>(path: P, handler: Handler<P, 'post'>): void;
  put<P extends PathOf<'put'>>(path: P, handler: Handler<P, 'put'>): void;
  delete<P extends PathOf<'delete'>>(path: P, handler: Handler<P, 'delete'>): void;
}

/** What express-openapi-validator leaves on a request it matched to an operation of the document. */
interface MatchedRequest extends Request {
  openapi?: { openApiRoute: string; pathParams: Record<string, string> };
}

/**
 * The operations' handlers, found by the operation express-openapi-validator matched (its
 * `openApiRoute`, the document's path under `base`, and the method): the route is looked up
 * once, by the validator, instead of again by the router walking every route in turn. The
 * validator orders the document's paths (`/customers/lookup` before `/customers/{id}`), so the
 * operation a request is validated against is the one that answers it. A request the document
 * describes but no handler serves goes on (to the 404).
 */
export function operationRoutes(base: string): { routes: TypedRoutes; dispatch: RequestHandler } {
  const handlers = new Map<string, (req: Request, res: Response) => Promise<void>>();
  const add =
    (method: Method) =>
    (path: string, handler: (req: never, res: never) => Promise<void>): void => {
      const key = `${method.toUpperCase()} ${base}${path}`;
      if (handlers.has(key)) throw new Error(`${method.toUpperCase()} ${path} has two handlers.`);
      handlers.set(key, handler as unknown as (req: Request, res: Response) => Promise<void>);
    };
  const dispatch: RequestHandler = (req: MatchedRequest, res, next) => {
    const operation = req.openapi;
    const handler = operation && handlers.get(`${req.method} ${operation.openApiRoute}`);
    if (!handler) return next();
    // The router gives each layer its own params; the operation's are the validator's.
    req.params = operation.pathParams;
    handler(req, res).catch(next);
  };
  return { routes: { get: add('get'), post: add('post'), put: add('put'), delete: add('delete') }, dispatch };
}
