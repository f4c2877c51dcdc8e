/**
 * The README's walks, run as written against a started server: its shell blocks in bash with
 * `API` and `TOKEN` set as "First steps" sets them, its code blocks as files. A documented
 * command that fails (a 415 where the README promises test deliveries) fails here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startTestApp, type TestApp } from '../support/test-app';

const root = resolve(__dirname, '../..');

/** The fenced blocks of one `## ` section of the README, in order, with their language. */
function blocksOf(section: string): { language: string; code: string }[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n## ${section}\n`);
  if (start < 0) throw new Error(`README has no section "${section}"`);
  const end = readme.indexOf('\n## ', start + 1);
  const text = readme.slice(start, end < 0 ? undefined : end);
  return [...text.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((match) => ({ language: match[1]!, code: match[2]! }));
}

/** Runs a shell block as the README's reader would paste it, with `set -e -o pipefail`; answers what it printed. */
function bash(code: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const child = spawn('bash', ['-c', `set -e -o pipefail\n${code}`], { cwd: root, env: { ...process.env, ...env } });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (exit) => done({ code: exit, output }));
  });
}

let app: TestApp;
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  // `WEBHOOK_ALLOW_INSECURE_URLS=true npm start`, in-process.
  app = await startTestApp({ webhookAllowInsecureUrls: true });
  await app.startWorkers();
  dir = mkdtempSync(join(tmpdir(), 'readme-walks-'));
});
afterAll(async () => {
  for (const child of children) child.kill();
  await app?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ API: `${app.origin}/api/v1`, TOKEN: app.organization.sandbox_token });

describe('README: Webhooks on your machine', () => {
  test('the receiver, subscribed and sent test deliveries, prints both events it verified', async () => {
    const [, receiver, subscribe] = blocksOf('Webhooks on your machine');
    expect(receiver!.language).toBe('js');
    expect(subscribe!.language).toBe('sh');
    // The package is this repository's client/, as "Using the client" installs it.
    const file = join(dir, 'receiver.mjs');
    writeFileSync(file, receiver!.code.replace(/from '@debt-collection\/client'/, `from '${join(root, 'client/webhooks.ts')}'`));
    const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: root, env: { ...process.env, WEBHOOK_SECRET: 'a_secret_of_16+_chars' } });
    children.push(child);
    let printed = '';
    child.stdout.on('data', (chunk) => (printed += chunk));
    child.stderr.on('data', (chunk) => (printed += chunk));
    // Listening once a connection is accepted.
    for (let tries = 0; ; tries++) {
      const up = await fetch('http://127.0.0.1:4000/').then(() => true, () => false);
      if (up) break;
      if (tries > 200) throw new Error(`the receiver did not start: ${printed}`);
      await new Promise((next) => setTimeout(next, 50));
    }

    const ran = await bash(subscribe!.code, env());
    expect(ran).toMatchObject({ code: 0 });
    expect(ran.output).not.toMatch(/"errorCode"/);
    for (let tries = 0; !(printed.includes('customer.create') && printed.includes('charge.succeeded')) && tries < 600; tries++) {
      await new Promise((next) => setTimeout(next, 50));
    }
    expect(printed).toMatch(/^customer\.create \S+ /m);
    expect(printed).toMatch(/^charge\.succeeded \S+ /m);
  });
});
