/**
 * The server keeps an idle connection open longer than the load balancers and clients in front
 * of it (server/app.ts `listen`), and says so: they close it first, so none sends a request on a
 * connection the server is closing at that moment.
 */
import express from 'express';
import type { AddressInfo } from 'node:net';
import http from 'node:http';
import { KEEP_ALIVE_TIMEOUT_MS, listen } from '../../server/app';

test('an answer on a kept-alive connection says it stays open 65 seconds, longer than the 60 of common load balancers', async () => {
  const app = express();
  app.get('/', (_req, res) => res.json({ ok: true }));
  const server = await listen(app, 0, '127.0.0.1');
  const agent = new http.Agent({ keepAlive: true });
  try {
    const headers = await new Promise<http.IncomingHttpHeaders>((answered, failed) => {
      http
        .get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { agent }, (response) => {
          response.resume();
          answered(response.headers);
        })
        .on('error', failed);
    });
    expect(KEEP_ALIVE_TIMEOUT_MS).toBe(65_000);
    expect(headers).toMatchObject({ connection: 'keep-alive', 'keep-alive': 'timeout=65' });
  } finally {
    agent.destroy();
    await new Promise<void>((closed) => server.close(() => closed()));
  }
});
