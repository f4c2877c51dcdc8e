/**
 * The mock: Prism serving the bundled documents, each on its own port, behind a front that
 * checks every request as the service does (mock/front.ts: the service's own validator and
 * error mapper, the token, the Portal's CSRF token, the sandbox's declining test cards). An
 * invalid request gets the service's answer (422 with every failing field, 400, 401, 403, 404,
 * 405, 415) in the spec's shape; a valid one gets the operation's documented example from
 * Prism. `Prefer: code=<status>` asks Prism for another documented answer, `Prefer:
 * example=<name>` for another named example, and `Prefer: dynamic=true` generates answers,
 * steered by the document's `x-json-schema-faker` settings (no invented properties, recent
 * dates).
 *
 *   npm run mock                 the API on 127.0.0.1:4010, the Portal on 127.0.0.1:4011,
 *                                the operating interface (/livez, /readyz, /health, /metrics) on 127.0.0.1:4012
 *   MOCK_PORT=4020 npm run mock  the API on 4020, the Portal on 4021, the operating interface on 4022
 *   PORTAL_MOCK_PORT=5000        the Portal's port, when the next one is taken
 *   OPERATE_MOCK_PORT=5001       the operating interface's port, likewise
 *
 * The Portal mock serves both of the Portal document's bases at its root: the Portal's pages
 * (`/s/{token}/accounts`) and the short links (`/{code}`). Prism itself listens on a free port
 * of 127.0.0.1 that only the front uses.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Server } from 'node:http';
import { join, resolve } from 'node:path';
import { freePort } from '../server/kernel/net';
import { mockFront } from './front';

const root = resolve(__dirname, '..');
export const MOCK_HOST = '127.0.0.1';
export const DEFAULT_MOCK_PORT = 4010;

/** The three documents the mock serves: the integrators' API, the Portal and the operating interface. */
export const MOCK_DOCUMENTS = { api: 'openapi.json', portal: 'portal.json', operate: 'operate.json' } as const;
export type MockDocument = keyof typeof MOCK_DOCUMENTS;

export interface RunningMock {
  url: string;
  /** Prism's process. */
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts the mock of one document (Prism, then its front on `port`) and resolves once both listen. */
export async function startMock(port: number = DEFAULT_MOCK_PORT, { document = 'api', timeoutMs = 60_000 }: { document?: MockDocument; timeoutMs?: number } = {}): Promise<RunningMock> {
  const prism = await startPrism(await freePort(), document, timeoutMs);
  let front: Server;
  try {
    front = await new Promise<Server>((listening, fail) => {
      const server = mockFront(document, new URL(prism.url)).listen(port, MOCK_HOST);
      server.once('listening', () => listening(server));
      server.once('error', fail);
    });
  } catch (error) {
    await prism.stop();
    throw error;
  }
  return {
    url: `http://${MOCK_HOST}:${port}`,
    process: prism.process,
    stop: async () => {
      await new Promise<void>((closed) => {
        front.close(() => closed());
        front.closeAllConnections();
      });
      await prism.stop();
    },
  };
}

/** Starts Prism on one document and resolves once it listens; rejects with Prism's output if it exits first. */
function startPrism(port: number, document: MockDocument, timeoutMs: number): Promise<RunningMock> {
  const child = spawn(
    join(root, 'node_modules', '.bin', 'prism'),
    ['mock', join(root, 'generated', MOCK_DOCUMENTS[document]), '--host', MOCK_HOST, '--port', String(port), '--errors'],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const url = `http://${MOCK_HOST}:${port}`;
  let output = '';
  const stop = () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null) return done();
      child.once('exit', () => done());
      child.kill('SIGTERM');
    });
  return new Promise((ready, fail) => {
    const timer = setTimeout(() => {
      void stop();
      fail(new Error(`Prism did not start within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const watch = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Prism is listening')) {
        clearTimeout(timer);
        ready({ url, process: child, stop });
      }
    };
    child.stdout.on('data', watch);
    child.stderr.on('data', watch);
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`Prism exited with ${code}:\n${output}`));
    });
  });
}

if (require.main === module) {
  const port = Number(process.env.MOCK_PORT ?? DEFAULT_MOCK_PORT);
  const portalPort = Number(process.env.PORTAL_MOCK_PORT ?? port + 1);
  const operatePort = Number(process.env.OPERATE_MOCK_PORT ?? port + 2);
  const started = [
    startMock(port, { document: 'api' }).then((mock) => ({ mock, what: 'the Debt Collection Service API' })),
    startMock(portalPort, { document: 'portal' }).then((mock) => ({ mock, what: 'the Portal (pages and short links)' })),
    startMock(operatePort, { document: 'operate' }).then((mock) => ({ mock, what: 'the operating interface (/livez, /readyz, /health, /metrics)' })),
  ];
  Promise.all(started)
    .then((mocks) => {
      for (const { mock, what } of mocks) {
        console.log(`Mock of ${what} on ${mock.url}`);
        mock.process.stdout?.pipe(process.stdout);
        mock.process.stderr?.pipe(process.stderr);
      }
      console.log('Ctrl-C to stop');
      const shutdown = () => void Promise.all(mocks.map(({ mock }) => mock.stop())).then(() => process.exit(0));
      process.on('SIGINT', shutdown);
      process.on('SIGTERM', shutdown);
    })
    .catch(async (error: Error) => {
      console.error(error.message);
      // The others may have started: stop them before leaving.
      const settled = await Promise.allSettled(started);
      await Promise.all(settled.map((result) => (result.status === 'fulfilled' ? result.value.mock.stop() : undefined)));
      process.exit(1);
    });
}
