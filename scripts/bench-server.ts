/**
 * The service served in-process for a benchmark, and stopped as the server stops. A load
 * generator that ends its run closes its sockets with requests still being handled; those
 * handlers go on using the pool, so the pool closes only after each of them has answered.
 */
import type { Server, ServerResponse } from 'node:http';
import type { Express } from 'express';
import { API_BASE, listen } from '../server/app';

export interface BenchServer {
  server: Server;
  /** http://127.0.0.1:<port>/api/v1 */
  base: string;
  /** Resolves once every request received so far has been answered. */
  settled(): Promise<void>;
  /** Stops accepting, waits for the open connections and for every request to be answered. */
  stop(): Promise<void>;
}

const STOP_TIMEOUT_MS = 60_000;

export async function serveForBench(app: Express): Promise<BenchServer> {
  const server = await listen(app, 0, '127.0.0.1');
  // A response whose client left stays here until its handler ends it: only then is the
  // handler done with the database.
  const unanswered = new Set<ServerResponse>();
  server.on('request', (_request, response: ServerResponse) => {
    unanswered.add(response);
    response.once('finish', () => unanswered.delete(response));
  });
  const settled = async () => {
    const deadline = Date.now() + STOP_TIMEOUT_MS;
    for (;;) {
      for (const response of unanswered) if (response.writableEnded) unanswered.delete(response);
      if (unanswered.size === 0) return;
      if (Date.now() > deadline) throw new Error(`${unanswered.size} requests still unanswered ${STOP_TIMEOUT_MS / 1000} s after the load ended`);
      await new Promise((done) => setTimeout(done, 20));
    }
  };
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    server,
    base: `http://127.0.0.1:${port}${API_BASE}`,
    settled,
    stop: async () => {
      await new Promise<void>((done) => {
        server.close(() => done());
        server.closeIdleConnections();
      });
      await settled();
    },
  };
}
