/**
 * Type tests of the server's typed routes, checked by `npm run typecheck` (never run): each
 * `@ts-expect-error` line must fail to compile. They prove that a handler drifting from the
 * document (a parameter, a body field or an answer it does not declare) fails tsc.
 */
import { operationRoutes } from '../../server/http/typed-routes';

const { routes } = operationRoutes('/api/v1');

routes.get('/customers/{id}', async (req, res) => {
  const id: string = req.params.id;
  const include: string | undefined = req.query.include;
  void include;
  // @ts-expect-error: the path has no such parameter
  void req.params.customerId;
  // @ts-expect-error: the answer is `{ data: Customer }`
  res.json({ customer: id });
});

routes.post('/locations', async (req, res) => {
  const name: string = req.body.name;
  // @ts-expect-error: LocationCreate has no such field
  void req.body.nickname;
  // @ts-expect-error: a Location has more than a name
  res.status(201).json({ data: { name } });
});

// @ts-expect-error: the document has no such operation
routes.delete('/customers', async () => {});
