/**
 * The operating interface of DESIGN.md, driven as an operator drives it: the server process
 * on an embedded PostgreSQL of its own, and the org commands beside it.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../server/kernel/net';
import { embeddedEnv, root, spawnServer, waitForHealth } from '../support/processes';

const tsx = join(root, 'node_modules', '.bin', 'tsx');
const run = promisify(execFile);
const dataDir = join(root, '.data', `operate-${process.pid}`);

const startServer = (port: number) => spawnServer(embeddedEnv(dataDir, { PORT: String(port) }));

/** What the last org command said on stderr. */
let orgSaid = '';

async function org(...args: string[]): Promise<Record<string, string>> {
  const { stdout, stderr } = await run(tsx, ['scripts/org.ts', ...args], { cwd: root, env: embeddedEnv(dataDir) });
  orgSaid = stderr;
  return JSON.parse(stdout) as Record<string, string>;
}

beforeAll(() => mkdirSync(dataDir, { recursive: true, mode: 0o755 }));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('npm start on the embedded database, with the org commands beside it', () => {
  test('serves, accepts an organization created while it runs, rotates tokens, and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    const server = startServer(port);
    try {
      await waitForHealth(port);
      const created = await org('create', '--name', 'Acme Recovery LLC', '--email', 'ops@acme-recovery.example');
      expect(Object.keys(created).sort()).toEqual(['organization_id', 'production_token', 'sandbox_token']);
      // Which database it wrote to, so that a token refused by a server on another one has its cause in sight.
      expect(orgSaid).toContain(`Writing to the embedded PostgreSQL in ${dataDir} (DATA_DIR)`);

      const api = `http://127.0.0.1:${port}/api/v1/customers`;
      const call = (token: string) => fetch(api, { headers: { authorization: `Bearer ${token}` } });
      expect((await call(created.production_token!)).status).toBe(200);
      expect((await call(created.sandbox_token!)).status).toBe(200);

      const rotated = await org('rotate-token', '--organization', created.organization_id!, '--environment', 'production');
      expect(rotated.token).not.toBe(created.production_token);
      expect((await call(created.production_token!)).status).toBe(401);
      expect((await call(rotated.token!)).status).toBe(200);
      expect((await call(created.sandbox_token!)).status).toBe(200);

      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
    } finally {
      server.child.kill('SIGKILL');
    }
  }, 120_000);

  test('a port already in use is a clear error and a non-zero exit', async () => {
    const blocker: Server = createServer();
    const port = await freePort();
    await new Promise<void>((done) => blocker.listen(port, '0.0.0.0', done));
    try {
      const server = startServer(port);
      expect(await server.exited).not.toBe(0);
      expect(server.output()).toContain(`Port ${port} is already in use`);
      expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
    } finally {
      blocker.close();
    }
  }, 120_000);

  test('org:create without --name fails with usage and a non-zero exit', async () => {
    await expect(org('create')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--name is required') });
  });
});
