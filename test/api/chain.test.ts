import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import type { Server } from 'node:http';
import { chain, onlyAt } from '../../server/http/chain';
import { listen } from '../../server/app';

/** An app whose one route runs `handlers` as one chain, then answers what it saw. */
async function serve(handlers: RequestHandler[]): Promise<{ url: string; close: () => Promise<void> }> {
  const app = express();
  app.get('/', chain(handlers), (_req, res) => {
    res.json({ reached: 'end', seen: res.locals.seen ?? [] });
  });
  const onError: ErrorRequestHandler = (error: Error, _req, res, _next) => {
    res.status(500).json({ reached: 'error', message: error.message, seen: res.locals.seen ?? [] });
  };
  app.use(onError);
  const server: Server = await listen(app, 0, '127.0.0.1');
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((done) => server.close(() => done())) };
}

const mark =
  (name: string): RequestHandler =>
  (_req, res, next) => {
    res.locals.seen = [...((res.locals.seen as string[] | undefined) ?? []), name];
    next();
  };

const refuse: RequestHandler = (_req, _res, next) => next(new Error('refused'));
const thrower: RequestHandler = () => {
  throw new Error('thrown');
};
const rejecter: RequestHandler = async () => {
  throw new Error('rejected');
};
const later: RequestHandler = async (_req, _res, next) => {
  await new Promise((done) => setTimeout(done, 5));
  next();
};

describe('chain: middlewares run one after the other as one layer', () => {
  test.each<[string, RequestHandler[], object]>([
    ['every middleware in order, then what follows', [mark('a'), mark('b'), mark('c')], { reached: 'end', seen: ['a', 'b', 'c'] }],
    ['an empty chain goes straight on', [], { reached: 'end', seen: [] }],
    ['next(error) stops the chain and reaches the error handler', [mark('a'), refuse, mark('c')], { reached: 'error', message: 'refused', seen: ['a'] }],
    ['a throw stops the chain', [mark('a'), thrower, mark('c')], { reached: 'error', message: 'thrown', seen: ['a'] }],
    ['a rejected promise stops the chain', [mark('a'), rejecter, mark('c')], { reached: 'error', message: 'rejected', seen: ['a'] }],
    ['an async middleware goes on when it calls next', [later, mark('b')], { reached: 'end', seen: ['b'] }],
  ])('%s', async (_name, handlers, expected) => {
    const server = await serve(handlers);
    try {
      const response = await fetch(server.url);
      expect(await response.json()).toEqual(expected);
    } finally {
      await server.close();
    }
  });

  test('a middleware that answers ends the request: nothing after it runs', async () => {
    const after = jest.fn<void, []>();
    const server = await serve([(_req, res) => void res.status(202).json({ reached: 'answered' }), () => after()]);
    try {
      const response = await fetch(server.url);
      expect(response.status).toBe(202);
      expect(await response.json()).toEqual({ reached: 'answered' });
      expect(after).not.toHaveBeenCalled();
    } finally {
      await server.close();
    }
  });
});

describe('onlyAt: a middleware of one method and path in a chain, as a route would be', () => {
  test.each<[string, string, string[]]>([
    ['POST', '/base/bulk/things', ['bulk', 'after']],
    ['POST', '/base/Bulk/THINGS/', ['bulk', 'after']],
    ['POST', '/base/bulk/things?limit=5', ['bulk', 'after']],
    ['GET', '/base/bulk/things', ['after']],
    ['POST', '/base/bulk/things/1', ['after']],
    ['POST', '/base/bulk/thingsx', ['after']],
  ])('%s %s runs %j', async (method, path, seen) => {
    const app = express();
    app.use('/base', chain([onlyAt('POST', '/bulk/things', mark('bulk')), mark('after')]));
    app.use((_req, res) => void res.json({ seen: res.locals.seen }));
    const server: Server = await listen(app, 0, '127.0.0.1');
    try {
      const { port } = server.address() as { port: number };
      const response = await fetch(`http://127.0.0.1:${port}${path}`, { method });
      expect(await response.json()).toEqual({ seen });
    } finally {
      await new Promise((done) => server.close(done));
    }
  });
});
