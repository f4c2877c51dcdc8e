/**
 * Closing the HTTP server under load. Node's `server.close()` stops accepting connections and
 * closes the idle ones once, but a kept-alive connection that is busy at that moment stays
 * open, and Node goes on answering the requests that arrive on it, with keep-alive, for as
 * long as the client keeps sending: a busy client keeps `close()` from ever calling back, and
 * everything after it in the stop (the workers, the queue, the pool, the embedded PostgreSQL)
 * never runs. So, while closing: every answer says `Connection: close` (the client opens no
 * further request on it), connections gone idle are closed at once, and what is still open
 * when the grace ends is cut (its request's work still finishes; only the answer is lost).
 */
import type { Server } from 'node:http';

const IDLE_SWEEP_MS = 50;

export function closeServer(server: Server, graceMs: number): Promise<void> {
  return new Promise((done) => {
    server.prependListener('request', (_req, res) => res.setHeader('Connection', 'close'));
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(cut);
      done();
    });
    server.closeIdleConnections();
  });
}
