/**
 * The server listens from the first moment of a start, before the database is open and the
 * migrations have run (a first start, or a long migration, takes a while): /livez and /readyz
 * answer at once (alive; not ready, saying which step is missing), so that an orchestrator
 * neither restarts a process that is migrating nor sends it traffic. Any other request is held,
 * unanswered, until the service is ready, and then answered by it as usual: nothing but the
 * probes answers differently during a start. A start that fails drops the held requests'
 * connections, as a port not yet listened on would have refused them.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Readiness } from './readiness';
import { answerLivez, answerReadyz, methodAllowed } from './probe-routes';

export interface StartGate {
  /** What the server runs for each request: the probes, or the held line, until `open`. */
  listener: RequestListener;
  /** The service is ready: the held requests and every later one go to `app`. */
  open(app: RequestListener): void;
  /** The start failed: the held requests' connections are closed. */
  abandon(): void;
}

export function startGate(readiness: Readiness): StartGate {
  let app: RequestListener | undefined;
  let held: [IncomingMessage, ServerResponse][] = [];
  return {
    listener: (req, res) => {
      if (app) return app(req, res);
      const path = (req.url ?? '').split('?')[0];
      if (path === '/livez' || path === '/readyz') {
        if (!methodAllowed(req, res)) return;
        if (path === '/livez') return answerLivez(res);
        answerReadyz(res, readiness).catch(() => res.destroy());
        return;
      }
      held.push([req, res]);
    },
    open: (ready) => {
      app = ready;
      const waiting = held;
      held = [];
      for (const [req, res] of waiting) ready(req, res);
    },
    abandon: () => {
      for (const [req] of held) req.socket.destroy();
      held = [];
    },
  };
}
