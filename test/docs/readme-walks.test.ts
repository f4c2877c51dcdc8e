/**
 * The README's walks, run as written against a started server: their shell blocks in bash with
 * `API` and `TOKEN` set as "First steps" sets them (a section's blocks joined, as pasted into one
 * terminal), their code blocks as files. A documented command that fails (a 415 where the README
 * promises test deliveries) fails here; an error the README shows (401, 404, 422, 409
 * `account_disputed`, 400 `card_declined`) must be the one printed. The steps a browser takes
 * are not shell: the tests say, at each, how they are taken or skipped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openPortal } from '../support/portal-browser';
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

/** The section's shell blocks, joined as a reader pastes them into one terminal. */
function shellOf(section: string): string {
  return blocksOf(section)
    .filter((block) => block.language === 'sh')
    .map((block) => block.code)
    .join('');
}

/**
 * Runs shell as the README's reader would paste it, with `set -e -o pipefail`, in `cwd` (a
 * scratch folder unless told); answers what it printed.
 */
function bash(code: string, env: Record<string, string>, cwd = dir): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const child = spawn('bash', ['-c', `set -e -o pipefail\n${code}`], { cwd, env: { ...process.env, ...env } });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (exit) => done({ code: exit, output }));
  });
}

/** What a walk printed, once it ran to its end (what it printed tells why when it did not). */
function ranToEnd(ran: { code: number | null; output: string }): string {
  if (ran.code !== 0) throw new Error(`the walk stopped (exit ${ran.code}):\n${ran.output}`);
  return ran.output;
}

/** The JSON lines a walk printed (its answers), in order. */
function answers(output: string): any[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
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

    const output = ranToEnd(await bash(subscribe!.code, env()));
    expect(output).not.toMatch(/"errorCode"/);
    for (let tries = 0; !(printed.includes('customer.create') && printed.includes('charge.succeeded')) && tries < 600; tries++) {
      await new Promise((next) => setTimeout(next, 50));
    }
    expect(printed).toMatch(/^customer\.create \S+ /m);
    expect(printed).toMatch(/^charge\.succeeded \S+ /m);
  });
});

/**
 * "First steps" and the sandbox walks that follow it, in the README's order, one organization
 * throughout (CUST-1 and DA-1 carry from one walk to the next, as in the reader's terminal).
 * Their server has no workers: "Take a payment" subscribes https://hooks.example.com, and no
 * test reaches the internet; nothing these walks print waits on a worker (the sandbox clock
 * does its work inside the request).
 */
describe('README: the sandbox walks', () => {
  let server: TestApp;
  /** The sandbox token "First steps" prints. */
  let token: string;
  const walkEnv = () => ({ API: `${server.origin}/api/v1`, TOKEN: token });

  beforeAll(async () => {
    server = await startTestApp({ webhookAllowInsecureUrls: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('First steps: org:create, customers, the three errors and a Portal session', async () => {
    // The second block, in the clone's folder; the first (`npm ci && npm start`) is this test's
    // server. Substituted: the server's address (a random port, not 3000) and DATABASE_URL, so
    // that `org:create` writes to this server's database, as the README says it must.
    const block = blocksOf('First steps').filter((b) => b.language === 'sh')[1]!.code;
    const output = ranToEnd(await bash(block.replaceAll('http://127.0.0.1:3000', server.origin), { DATABASE_URL: server.databaseUrl }, root));
    const [org, customer, method, page, unauthenticated, notFound, invalid, session] = answers(output);
    expect(org).toEqual({ organization_id: expect.any(String), production_token: expect.stringMatching(/^dcs_live_/), sandbox_token: expect.stringMatching(/^dcs_test_/) });
    token = org.sandbox_token;
    expect(customer.data).toMatchObject({ name: 'Maria Gonzalez', external_id: 'CUST-1' });
    expect(method.data).toMatchObject({ type: 'card', card_token: expect.objectContaining({ card_number: '4242' }) });
    expect(page).toMatchObject({ data: [expect.objectContaining({ external_id: 'CUST-1' })], meta: expect.any(Object), links: expect.any(Object) });
    expect(unauthenticated).toMatchObject({ errorCode: 'unauthenticated' });
    expect(notFound).toMatchObject({ errorCode: 'not_found' });
    expect(invalid.errors).toEqual({ name: expect.any(Array), email: expect.any(Array) });
    expect(session.data.portal_url).toMatch(new RegExp(`^${server.origin}/portal/s/[^/]+/accounts\\?utm_source=.*&utm_medium=email$`));
    expect(output).toContain(`302 ${session.data.portal_url}\n`);
    expect(output).toMatch(/^HTTP\/1\.1 303/m);
    expect(output).toMatch(/^location: \/portal\/accounts\r?$/im);
    expect(output).toMatch(/^set-cookie: portal_session=.*; Path=\/portal; HttpOnly; SameSite=Lax/im);
  });

  test('Take a payment: a charge, a decline, a refund, a plan on the sandbox clock, a scheduled charge, a cheque', async () => {
    const output = ranToEnd(await bash(shellOf('Take a payment (sandbox)'), walkEnv()));
    const [webhook, account, charge, afterCharge, transactions, declined, refund, plan, clock, planLater, scheduled, canceled, external, reversed] = answers(output);
    expect(webhook.data).toMatchObject({ url: 'https://hooks.example.com/dcs' });
    expect(account.data).toMatchObject({ external_id: 'DA-1', current_balance: 184250 });
    expect(charge.data).toMatchObject({ status: 'succeeded', amount: 5000, reference_number: expect.stringMatching(/^CH-/) });
    expect(afterCharge.data).toMatchObject({ current_balance: 179250 });
    expect(transactions.data).toEqual([expect.objectContaining({ type: 'charge', status: 'succeeded', amount: 5000 })]);
    expect(declined).toMatchObject({ errorCode: 'card_declined', charge_id: expect.any(String) });
    expect(refund.data).toMatchObject({ id: charge.data.id, status: 'partially_refunded' });
    expect(plan.data).toMatchObject({ status: 'active' });
    expect(clock.data).toMatchObject({ status: 'ready' });
    const succeeded = planLater.data.charges.filter((c: { status: string }) => c.status === 'succeeded');
    expect(succeeded).toHaveLength(3);
    for (const c of succeeded) expect(c.successfully_charged_at).toEqual(expect.any(String));
    expect(scheduled.data).toMatchObject({ status: 'scheduled', amount: 2500 });
    expect(canceled.data).toMatchObject({ id: scheduled.data.id, status: 'canceled' });
    expect(external.data).toMatchObject({ status: 'recorded', transactions: [expect.objectContaining({ type: 'external', amount: 12500 })] });
    expect(reversed.data).toMatchObject({ status: 'reversed' });
  });

  test('Settle for less: an offer of 40 % off, accepted at once, settles the account', async () => {
    const output = ranToEnd(await bash(shellOf('Settle for less (sandbox)'), walkEnv()));
    const [account, offer, session, accepted, completed, transactions, settled] = answers(output);
    expect(account.data).toMatchObject({ external_id: 'DA-9', current_balance: 184250 });
    expect(offer.data).toMatchObject({
      status: 'pending',
      amount: 184250,
      discount: 73700,
      discount_percentage: 40,
      discounted_amount: 110550,
      total_amount: 110550,
      months_period: 6,
      allowed: ['full_amount', 'payment_plan'],
    });
    expect(session.data.portal_url).toEqual(expect.any(String));
    expect(accepted.data).toMatchObject({ id: offer.data.id });
    expect(completed.data).toMatchObject({ status: 'completed', charge_id: expect.any(String), completed_at: expect.any(String) });
    expect(transactions.data).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'charge', amount: 110550 }), expect.objectContaining({ type: 'settlement_write_off', amount: 73700 })]),
    );
    expect(settled.data).toMatchObject({ current_balance: 0, status: 'paid_off' });
  });

  test('Disputes: the hold skips an instalment and refuses a charge; verified, the plan charges again', async () => {
    const output = ranToEnd(await bash(shellOf('Disputes (FDCPA §809(b), Regulation F §1006.38)'), walkEnv()));
    const [session, dispute, listed, clock, held, refused, verified, clockLater, resumed, file] = answers(output);
    expect(session.data.portal_url).toEqual(expect.any(String));
    // Recorded through the API, the browser's form being the one step a shell cannot take.
    expect(dispute.data).toMatchObject({ status: 'pending', source: 'api', in_writing: true, hold: true });
    expect(listed.data).toEqual([expect.objectContaining({ id: dispute.data.id, status: 'pending', hold: true })]);
    expect(clock.data).toMatchObject({ status: 'ready' });
    const skipped = held.data.charges.filter((c: { status: string }) => c.status === 'skipped');
    expect(skipped).toHaveLength(1);
    expect(refused).toMatchObject({
      error: 'The account is held by an open dispute and takes no payment until the dispute is answered.',
      errorCode: 'account_disputed',
    });
    expect(verified.data).toMatchObject({ status: 'verified', hold: false, resolved_at: expect.any(String) });
    expect(clockLater.data).toMatchObject({ status: 'ready' });
    // The instalment after the skipped one, now charged.
    const charges: { status: string }[] = resumed.data.charges;
    const after = charges[charges.findIndex((c) => c.status === 'skipped') + 1];
    expect(after).toMatchObject({ status: 'succeeded' });
    expect(file.data).toMatchObject({ id: dispute.data.id, files: [expect.objectContaining({ name: 'receipt.pdf', content_type: 'application/pdf' })] });
    expect(output).toMatch(/^content-disposition: attachment/im);
  });

  test('Documents to sign, and "Contact us": a document shared, a ticket answered and resolved', async () => {
    // The walk's browser step, taken as the Portal's "Contact us" form posts it: the customer,
    // signed in by a link, writes a ticket.
    const link = await fetch(`${server.origin}/api/v1/customer-sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ customer_id: 'CUST-1' }),
    }).then((response) => response.json() as Promise<{ data: { portal_url: string } }>);
    const portal = await openPortal(`${server.origin}/portal`, link.data.portal_url);
    const written = await fetch(`${server.origin}/portal/contact`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: portal.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: portal.csrf, category: 'need-info-about-my-account', subject: 'A fee I do not know', body: 'What is the $25.00 on my balance?' }).toString(),
    });
    expect(written.status).toBe(303);

    const output = ranToEnd(await bash(shellOf('Documents to sign, and "Contact us"'), walkEnv()));
    const [document, tickets, thread, resolved] = answers(output);
    expect(document.data).toMatchObject({
      status: 'pending',
      contexts: ['checkout'],
      file: { content_type: 'application/pdf', size: expect.any(Number), sha256: expect.any(String) },
      signature: null,
    });
    expect(tickets.data).toEqual([expect.objectContaining({ subject: 'A fee I do not know', status: 'open' })]);
    expect(tickets.data[0].messages).toBeUndefined();
    expect(thread.data.messages.map((message: { body: string }) => message.body)).toEqual(['What is the $25.00 on my balance?', 'A late fee of $25.00 was added on October 20.']);
    expect(resolved.data).toMatchObject({ id: tickets.data[0].id, status: 'resolved' });
  });
});
