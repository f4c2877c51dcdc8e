/**
 * Prism serving the bundled document: every operation answers its documented example, and
 * requests are validated against the document (a missing token is a 401, a bad body a 422
 * with that operation's example). `Prefer: dynamic=true` generates answers instead, steered by
 * the document's `x-json-schema-faker` settings (no invented properties, recent dates).
 *
 *   npm run mock                 127.0.0.1:4010
 *   MOCK_PORT=4020 npm run mock  another port
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '..');
export const MOCK_HOST = '127.0.0.1';
export const DEFAULT_MOCK_PORT = 4010;

export interface RunningMock {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts Prism and resolves once it listens; rejects with Prism's output if it exits first. */
export function startMock(port: number = DEFAULT_MOCK_PORT, timeoutMs = 60_000): Promise<RunningMock> {
  const child = spawn(
    join(root, 'node_modules', '.bin', 'prism'),
    ['mock', join(root, 'generated', 'openapi.json'), '--host', MOCK_HOST, '--port', String(port), '--errors'],
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
  startMock(port)
    .then((mock) => {
      console.log(`Mock of the Debt Collection Service API on ${mock.url} (Ctrl-C to stop)`);
      mock.process.stdout?.pipe(process.stdout);
      mock.process.stderr?.pipe(process.stderr);
      const shutdown = () => void mock.stop().then(() => process.exit(0));
      process.on('SIGINT', shutdown);
      process.on('SIGTERM', shutdown);
    })
    .catch((error: Error) => {
      console.error(error.message);
      process.exit(1);
    });
}
