/**
 * The client as integrators get it: `npm pack ./client` (which builds it), the tarball installed
 * in a project outside the repository, then used against the running service from plain Node
 * ESM and CommonJS, and type-checked by tsc with NodeNext resolution, webhook helpers included.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { encryptWebhookData, signWebhookBody } from '../../client/webhooks';
import { startTestApp, type TestApp } from '../support/test-app';
import { customerWithAccount } from '../support/fixtures';
import { eventually, startReceiver, startTestWorker } from '../support/webhooks';

const run = promisify(execFile);
const root = resolve(__dirname, '../..');
const project = mkdtempSync(join(tmpdir(), 'dcs-client-consumer-'));
let app: TestApp;

beforeAll(async () => {
  // Insecure URLs: a receiver on 127.0.0.1 gets a real external-charge.create delivery.
  app = await startTestApp({ webhookAllowInsecureUrls: true });
  await run('npm', ['pack', join(root, 'client'), '--pack-destination', project, '--silent'], { cwd: root });
  const tarball = readdirSync(project).find((name) => name.endsWith('.tgz'))!;
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  // From the npm cache when it holds them (it does after the repository's npm ci). No
  // @types/node: the package's types must compile without it.
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', `./${tarball}`], { cwd: project });
}, 180_000);

afterAll(async () => {
  await app?.stop();
  rmSync(project, { recursive: true, force: true });
});

const SECRET = 'whsec_5c1d8e2f9a7b4c3d';
const RAW_BODY = '{"data":{"id":"3f9e1c2a-8b7d-4e6f-9a1b-2c3d4e5f6a7b"}}';

function consumerEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    API_BASE_URL: app.baseUrl,
    API_TOKEN: app.organization.sandbox_token,
    WEBHOOK_SECRET: SECRET,
    WEBHOOK_BODY: RAW_BODY,
    WEBHOOK_SIGNATURE: signWebhookBody(RAW_BODY, SECRET),
    WEBHOOK_ENCRYPTED: encryptWebhookData({ amount: 2500, currency: 'USD' }, SECRET),
  };
}

/** The same program in both module systems: create a customer, read it back, use the webhook helpers. */
const program = (name: string) => `
const api = createApiClient({ baseUrl: process.env.API_BASE_URL, token: process.env.API_TOKEN });
const created = await api.POST('/customers', { body: { name: '${name}', email: 'dana.whitfield@mail.debt-collection.example' } });
const read = await api.GET('/customers/{id}', { params: { path: { id: created.data.data.id } } });
const missing = await api.GET('/customers/{id}', { params: { path: { id: 'NO-SUCH' } } });
const env = process.env;
console.log(JSON.stringify({
  created: created.response.status,
  name: read.data.data.name,
  missing: missing.error,
  verified: verifyWebhookSignature(env.WEBHOOK_BODY, env.WEBHOOK_SIGNATURE, env.WEBHOOK_SECRET),
  forged: verifyWebhookSignature(env.WEBHOOK_BODY + ' ', env.WEBHOOK_SIGNATURE, env.WEBHOOK_SECRET),
  decrypted: decryptWebhookData(env.WEBHOOK_ENCRYPTED, env.WEBHOOK_SECRET),
}));
`;

const expected = (name: string) => ({
  created: 201,
  name,
  missing: { error: expect.any(String), errorCode: 'not_found' },
  verified: true,
  forged: false,
  decrypted: { amount: 2500, currency: 'USD' },
});

test('plain Node ESM imports it by name', async () => {
  const file = join(project, 'esm.mjs');
  writeFileSync(file, `import { createApiClient, verifyWebhookSignature, decryptWebhookData } from '@debt-collection/client';\n${program('Dana ESM')}`);
  const { stdout } = await run(process.execPath, [file], { cwd: project, env: consumerEnv() });
  expect(JSON.parse(stdout)).toEqual(expected('Dana ESM'));
});

test('plain Node CommonJS requires it', async () => {
  const file = join(project, 'cjs.cjs');
  const body = `const { createApiClient, verifyWebhookSignature, decryptWebhookData } = require('@debt-collection/client');\n(async () => {${program('Dana CJS')}})();`;
  writeFileSync(file, body);
  const { stdout } = await run(process.execPath, [file], { cwd: project, env: consumerEnv() });
  expect(JSON.parse(stdout)).toEqual(expected('Dana CJS'));
});

test('tsc with NodeNext resolution types it, from ESM and from CommonJS, and refuses what the document does not allow', async () => {
  const typed = `
const api = createApiClient({ baseUrl: 'http://127.0.0.1:3000/api/v1', token: 'dcs_test_x' });
export async function use(rawBody: string, signature: string | undefined): Promise<string> {
  const { data } = await api.GET('/customers/{id}', { params: { path: { id: 'CUST-1' } } });
  const name: string | undefined = data?.data.name;
  // @ts-expect-error: the document has no such path
  await api.GET('/no-such-path');
  // @ts-expect-error: a customer's name is a string
  await api.POST('/customers', { body: { name: 42, email: 'a@b.example' } });
  const ok: boolean = verifyWebhookSignature(rawBody, signature, 'secret');
  const payload = JSON.parse(rawBody) as WebhookPayload<'customer.create'>;
  const id: string | null = payload.data.id;
  const error: ApiError = { error: 'x', errorCode: 'not_found' };
  return [name, ok, id, error.errorCode, String(decryptWebhookData('', 'secret'))].join();
}
`;
  const names = 'createApiClient, verifyWebhookSignature, decryptWebhookData, type WebhookPayload, type ApiError';
  writeFileSync(join(project, 'typed-esm.mts'), `import { ${names} } from '@debt-collection/client';\n${typed}`);
  writeFileSync(join(project, 'typed-cjs.cts'), `import { ${names} } from '@debt-collection/client';\n${typed}`);
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      // skipLibCheck spares checking the 1 MB of generated types again; a declaration that did
      // not resolve would make the client `any`, and the @ts-expect-error lines would then fail.
      // Plain `strict`, and no Node types (`types: []`, none installed).
      compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: true, types: [] },
      files: ['typed-esm.mts', 'typed-cjs.cts'],
    }),
  );
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const problems = await run(process.execPath, [tsc, '-p', project], { cwd: project }).then(
    ({ stdout }) => stdout,
    (error: { stdout: string }) => error.stdout,
  );
  expect(problems).toBe('');
}, 60_000);

test("the package's own declarations compile under plain strict with no Node types (checked, not skipped)", async () => {
  const dir = join(project, 'no-node-types');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'use.mts'), "import { deriveWebhookEncryptionKey, signWebhookBody } from '@debt-collection/client';\nexport const key: Uint8Array = deriveWebhookEncryptionKey('secret');\nexport const signature: string = signWebhookBody(new Uint8Array([1]), 'secret');\n");
  writeFileSync(
    join(dir, 'tsconfig.json'),
    // A browser project's: fetch from the DOM library (openapi-fetch needs it), nothing of Node.
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2022', 'DOM'], strict: true, noEmit: true, types: [] }, files: ['use.mts'] }),
  );
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const problems = await run(process.execPath, [tsc, '-p', dir], { cwd: dir }).then(
    ({ stdout }) => stdout,
    (error: { stdout: string }) => error.stdout,
  );
  expect(problems).toBe('');
}, 120_000);

test('the installed package decrypts a real external-charge.create delivery to the external charge the API recorded', async () => {
  const receiver = await startReceiver();
  const worker = await startTestWorker(app);
  try {
    const secret = 'external_charge_secret_0123';
    await app.api.POST('/webhooks', { body: { url: receiver.url, events: ['external-charge.create'], secret } });
    const { account } = await customerWithAccount(app.api, {}, { balance: 9_000 });
    const { data } = await app.api.POST('/external-charges', {
      body: { debt_account_id: account.id, amount: 2_500, paid_at: app.clock.now().toISOString().slice(0, 10), method: 'check', reference: 'CHK-7781' },
    });
    const hit = await eventually(() => receiver.received.find((r) => r.headers['x-service-event-name'] === 'external-charge.create'), 'external-charge.create');
    const file = join(project, 'decrypt.cjs');
    writeFileSync(file, "const { decryptWebhookData } = require('@debt-collection/client');\nconsole.log(JSON.stringify(decryptWebhookData(process.env.WEBHOOK_ENCRYPTED, process.env.WEBHOOK_SECRET)));\n");
    const { stdout } = await run(process.execPath, [file], { cwd: project, env: { ...process.env, WEBHOOK_ENCRYPTED: hit.body.data as string, WEBHOOK_SECRET: secret } });
    expect(JSON.parse(stdout)).toEqual(data!.data);
  } finally {
    await worker.stop();
    await receiver.close();
  }
}, 60_000);
