/**
 * Routes typed from the document, as Backstage's generated routers are: a handler registered
 * for `('/customers/{id}', 'get')` gets `req.params`, `req.body` and `req.query` and answers
 * `res.json` in the types of `paths['/customers/{id}']['get']` from `generated/`. A body, a
 * parameter or an answer that drifts from the document fails `tsc`, not a test at run time.
 *
 * Query values are typed as the strings Express hands over (the validator has checked them
 * against the document; a route converts what it needs).
 */
import type { Request, Response, Router } from 'express';
import type { paths } from '../../generated/schema';

type Method = 'get' | 'post' | 'put' | 'delete';

/** The document's paths that have an operation for `M`. */
export type PathOf<M extends Method> = { [P in keyof paths]: paths[P][M] extends undefined | never ? never : P }[keyof paths];

type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;

type PathParams<O> = O extends { parameters: { path: infer X } } ? (X extends Record<string, unknown> ? { [K in keyof X]: string } : Record<never, never>) : Record<never, never>;
type QueryParams<O> = O extends { parameters: { query?: infer Q } } ? (Q extends Record<string, unknown> ? { [K in keyof Q]?: string } : Record<never, never>) : Record<never, never>;
type Body<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type Success<R> = { [S in keyof R]: S extends 200 | 201 ? (R[S] extends { content: { 'application/json': infer J } } ? J : never) : never }[keyof R];
type Answer<O> = O extends { responses: infer R } ? Success<R> : never;

export type TypedRequest<P extends keyof paths, M extends Method> = Request<
  PathParams<Operation<P, M>>,
  Answer<Operation<P, M>>,
  Body<Operation<P, M>>,
  QueryParams<Operation<P, M>>
>;
export type TypedResponse<P extends keyof paths, M extends Method> = Response<Answer<Operation<P, M>>>;

type Handler<P extends keyof paths, M extends Method> = (req: TypedRequest<P, M>, res: TypedResponse<P, M>) => Promise<void>;

/** `/customers/{id}` as Express writes it: `/customers/:id`. */
export const expressPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

export interface TypedRoutes {
  get<P extends PathOf<'get'>>(path: P, handler: Handler<P, 'get'>): void;
  post<P extends PathOf<'post'>>(path: P, handler: Handler<P, 'post'>): void;
  put<P extends PathOf<'put'>>(path: P, handler: Handler<P, 'put'>): void;
  delete<P extends PathOf<'delete'>>(path: P, handler: Handler<P, 'delete'>): void;
}

/** Registers document operations on `router`; routes are matched in the order they are added. */
export function typedRoutes(router: Router): TypedRoutes {
  const add =
    (method: Method) =>
    (path: string, handler: (req: never, res: never) => Promise<void>): void => {
      router[method](expressPath(path), handler as unknown as (req: Request, res: Response) => Promise<void>);
    };
  return { get: add('get'), post: add('post'), put: add('put'), delete: add('delete') };
}
