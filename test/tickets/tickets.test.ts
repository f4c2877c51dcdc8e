/**
 * Tickets: opened in the Portal (signed in or as a guest, over plain HTTP as a browser posts its
 * forms), answered through the API, the read marks, the statuses, the reply's e-mail through
 * the communications log, and ticket.create / ticket.update against the document.
 */
import { customerWithAccount, expectFieldError, newSession, UNKNOWN_UUID, unique } from '../support/fixtures';
import { openPortal, type PortalBrowser } from '../support/portal-browser';
import { startTestApp, type TestApp } from '../support/test-app';
import { outboxEvents, subscribeToEverything } from '../support/webhooks';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true });
  await subscribeToEverything(app.sandbox);
});
afterAll(async () => app?.stop());

interface Browser {
  cookie: string;
  csrf: string;
}

const portal = () => app.config.portalUrl;

async function signedIn(): Promise<{ browser: PortalBrowser; customerId: string; accountId: string }> {
  const { customer, account } = await customerWithAccount(app.sandbox);
  const session = await newSession(app.sandbox, { customer_id: customer.id, debt_account_id: account.id });
  return { browser: await openPortal(portal(), session.portal_url), customerId: customer.id, accountId: account.id };
}

/** A guest on the Portal's entry of the organization (sandbox). */
async function guest(): Promise<Browser> {
  const entry = await fetch(`${portal()}/?organization=${app.organization.organization_id}&environment=sandbox`);
  const cookie = entry.headers.getSetCookie().find((line) => line.startsWith('portal_session='))!.split(';')[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await entry.text())![1]!;
  return { cookie, csrf };
}

async function post(browser: Browser, path: string, fields: Record<string, string>) {
  const response = await fetch(`${portal()}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: browser.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: browser.csrf, ...fields }).toString(),
  });
  return { status: response.status, location: response.headers.get('location'), html: await response.text() };
}

const open = async (browser: Browser, path: string) => {
  const response = await fetch(`${portal()}${path}`, { headers: { cookie: browser.cookie } });
  return { status: response.status, html: await response.text() };
};

const write = { category: 'need-info-about-my-account', subject: 'Question about my balance', body: 'Why is my balance higher than in October?' };

async function contact(browser: Browser, fields: Record<string, string> = {}): Promise<string> {
  const sent = await post(browser, '/contact', { ...write, ...fields });
  expect(sent.status).toBe(303);
  return sent.location!.split('/').pop()!;
}

const ticket = async (id: string) => (await app.sandbox.GET('/tickets/{id}', { params: { path: { id } } })).data!.data;
const reply = (id: string, body: string) => app.sandbox.POST('/tickets/{id}/messages', { params: { path: { id } }, body: { body } });

test('GET /contact-request-categories answers Tratta\'s five keys with labels', async () => {
  const { data } = await app.sandbox.GET('/contact-request-categories');
  expect(data!.data.map((category) => category.key)).toEqual(['other', 'trouble-logging-in', 'change-payment-plan-info', 'need-info-about-my-account', 'need-call-support']);
  expect(data!.data.every((category) => category.label.length > 0)).toBe(true);
});

describe('a signed-in customer\'s ticket', () => {
  test('opened in the Portal, answered by an agent (unread, e-mailed as a link), read, resolved and opened again: the events in the document\'s shape', async () => {
    const { browser, customerId, accountId } = await signedIn();
    const id = await contact(browser, { account: accountId, body: 'Why is my balance <b>higher</b>?\nThanks' });
    const opened = await ticket(id);
    expect(opened).toMatchObject({
      source: 'collect',
      status: 'open',
      category: 'need-info-about-my-account',
      is_read_by_customer: true,
      is_read_by_organization: false,
      customer: { id: customerId },
      debt_account: { id: accountId },
      messages: [{ body: 'Why is my balance <b>higher</b>?\nThanks', sender: { type: 'customer', id: customerId }, source: 'portal' }],
    });
    expect(await outboxEvents(app, 'ticket.create', id)).toHaveLength(1);
    const page = await open(browser, `/tickets/${id}`);
    expect(page.html).toContain('Why is my balance &lt;b&gt;higher&lt;/b&gt;?');
    expect(page.html).not.toContain('<b>higher</b>');

    const replied = await reply(id, 'A late fee of $25.00 was added on October 20.');
    expect(replied.response.status).toBe(201);
    expect(replied.data!.data).toMatchObject({ status: 'in_progress', is_read_by_customer: false, is_read_by_organization: true });
    expect(replied.data!.data.messages[1]).toMatchObject({ body: 'A late fee of $25.00 was added on October 20.', is_secure: true, source: 'api', sender: { type: 'user', id: null } });
    const updates = await outboxEvents(app, 'ticket.update', id);
    expect(updates.at(-1)!.messages).toHaveLength(2);
    expect(await outboxEvents(app, 'ticket.create', id)).toHaveLength(1);

    const mails = (await app.sandbox.GET('/communications', { params: { query: { customer_id: customerId, kind: 'ticket_reply' } } })).data!.data;
    expect(mails).toHaveLength(1);
    expect(mails[0]!.text).toContain(`${portal()}/s/`);
    expect(mails[0]!.text).not.toContain('late fee');

    expect((await open(browser, '/accounts')).html).toContain('(new reply)');
    await open(browser, `/tickets/${id}`);
    expect((await ticket(id)).is_read_by_customer).toBe(true);
    expect((await open(browser, '/accounts')).html).not.toContain('(new reply)');

    const resolved = await app.sandbox.PUT('/tickets/{id}', { params: { path: { id } }, body: { status: 'resolved', assigned_user: { name: 'Dana Whitfield', email: 'dana@acme-recovery.example' } } });
    expect(resolved.data!.data).toMatchObject({ status: 'resolved', resolved_at: expect.any(String), assigned_user: { name: 'Dana Whitfield' } });
    const count = (await outboxEvents(app, 'ticket.update', id)).length;
    await app.sandbox.PUT('/tickets/{id}', { params: { path: { id } }, body: { status: 'resolved' } });
    expect(await outboxEvents(app, 'ticket.update', id)).toHaveLength(count);

    expect((await post(browser, `/tickets/${id}/messages`, { body: 'One more question.' })).status).toBe(303);
    expect(await ticket(id)).toMatchObject({ status: 'open', resolved_at: null, is_read_by_organization: false });
    expect((await app.sandbox.POST('/tickets/{id}/read', { params: { path: { id } } })).data!.data.is_read_by_organization).toBe(true);
    const afterRead = (await outboxEvents(app, 'ticket.update', id)).length;
    await app.sandbox.POST('/tickets/{id}/read', { params: { path: { id } } });
    expect(await outboxEvents(app, 'ticket.update', id)).toHaveLength(afterRead);
  });

  test('each field is checked at its limit and nothing is opened on a 422', async () => {
    const { browser, customerId } = await signedIn();
    const before = (await app.sandbox.GET('/tickets', { params: { query: { limit: 100 } } })).data!.meta.total;
    expect((await post(browser, '/contact', { ...write, category: 'billing' })).status).toBe(422);
    expect((await post(browser, '/contact', { ...write, subject: ' ' })).status).toBe(422);
    expect((await post(browser, '/contact', { ...write, subject: 's'.repeat(256) })).status).toBe(422);
    expect((await post(browser, '/contact', { ...write, body: 'b'.repeat(5001) })).status).toBe(422);
    expect((await app.sandbox.GET('/tickets', { params: { query: { limit: 100 } } })).data!.meta.total).toBe(before);
    const id = await contact(browser, { subject: 's'.repeat(255), body: 'b'.repeat(5000) });
    expect((await ticket(id)).customer!.id).toBe(customerId);
    expect((await post(browser, `/tickets/${id}/messages`, { body: '   ' })).status).toBe(422);
    expect((await reply(id, ' ')).response.status).toBe(422);
    expect((await reply(id, 'r'.repeat(5001))).response.status).toBe(422);
    expect((await reply(id, 'r'.repeat(5000))).response.status).toBe(201);
  });

  test("another customer's ticket, or another tenant's, is a 404", async () => {
    const mine = await signedIn();
    const theirs = await signedIn();
    const id = await contact(theirs.browser);
    expect((await open(mine.browser, `/tickets/${id}`)).status).toBe(404);
    expect((await post(mine.browser, `/tickets/${id}/messages`, { body: 'hello' })).status).toBe(404);
    expect((await app.api.GET('/tickets/{id}', { params: { path: { id } } })).response.status).toBe(404);
    expect((await app.api.POST('/tickets/{id}/messages', { params: { path: { id } }, body: { body: 'x' } })).response.status).toBe(404);
    expect((await app.sandbox.GET('/tickets/{id}', { params: { path: { id: UNKNOWN_UUID } } })).response.status).toBe(404);
  });
});

describe('a guest\'s ticket', () => {
  test('needs a name, an e-mail address and a phone; its thread opens only in the browser that wrote it; a reply is not e-mailed', async () => {
    const browser = await guest();
    const refused = await post(browser, '/contact', { ...write, name: '', email: 'not-an-address', phone: '12' });
    expect(refused.status).toBe(422);
    expect(refused.html).toContain('Enter your name.');
    const email = `${unique('guest')}@mail.debt-collection.example`;
    const id = await contact(browser, { name: 'Jordan Miller', email, phone: '+1 (512) 555-0147' });
    expect(await ticket(id)).toMatchObject({ source: 'guest', name: 'Jordan Miller', email, phone: '+1 (512) 555-0147', customer: null, debt_account: null });
    expect((await open(browser, `/tickets/${id}`)).status).toBe(200);
    expect((await open(await guest(), `/tickets/${id}`)).status).toBe(404);
    await reply(id, 'We found your account.');
    expect((await open(browser, `/tickets/${id}`)).html).toContain('We found your account.');
    const sent = (await app.sandbox.GET('/communications', { params: { query: { kind: 'ticket_reply' } } })).data!.data;
    expect(sent.some((mail) => mail.to === email)).toBe(false);
    const [created] = await outboxEvents(app, 'ticket.create', id);
    expect(created).toMatchObject({ source: 'guest', customer: null });
  });
});

describe('GET /tickets', () => {
  test("Tratta's list: newest activity first, filters, no messages, limit 1 to 100 (default 15)", async () => {
    const { browser } = await signedIn();
    const older = await contact(browser, { category: 'other' });
    app.clock.advance(1000);
    const newer = await contact(browser, { category: 'need-call-support' });
    app.clock.advance(1000);
    await reply(older, 'Answered.');
    const listed = (await app.sandbox.GET('/tickets')).data!;
    expect(listed.meta.per_page).toBe(15);
    expect(listed.data.slice(0, 2).map((item) => item.id)).toEqual([older, newer]);
    expect(listed.data[0]).not.toHaveProperty('messages');
    const calls = (await app.sandbox.GET('/tickets', { params: { query: { category: 'need-call-support', status: 'open', source: 'collect' } } })).data!.data;
    expect(calls.map((item) => item.id)).toContain(newer);
    expect(calls.every((item) => item.category === 'need-call-support' && item.status === 'open')).toBe(true);
    expect((await app.sandbox.GET('/tickets', { params: { query: { limit: 100 } } })).response.status).toBe(200);
    expect((await app.sandbox.GET('/tickets', { params: { query: { limit: 1 } } })).data!.data).toHaveLength(1);
    expectFieldError((await app.sandbox.GET('/tickets', { params: { query: { limit: 101 } } })).error, 'query.limit');
    expectFieldError((await app.sandbox.GET('/tickets', { params: { query: { limit: 0 } } })).error, 'query.limit');
    expectFieldError((await app.sandbox.GET('/tickets', { params: { query: { status: 'closed' as never } } })).error, 'query.status');
    expect((await app.api.GET('/tickets')).data!.data.map((item) => item.id)).not.toContain(older);
  });
});

describe('attachments', () => {
  test('an agent may attach a PDF, PNG or JPEG checked by its bytes; it is served as an attachment of ours', async () => {
    const { browser } = await signedIn();
    const id = await contact(browser);
    const send = async (bytes: Buffer, type: string) => {
      const form = new FormData();
      form.append('body', 'Your statement is attached.');
      form.append('file', new Blob([bytes], { type }), 'statement.png');
      const response = await fetch(`${app.baseUrl}/tickets/${id}/messages`, { method: 'POST', headers: { authorization: `Bearer ${app.organization.sandbox_token}` }, body: form });
      return { status: response.status, body: (await response.json()) as Record<string, any> };
    };
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
    expect((await send(Buffer.from('<svg onload=alert(1)>'), 'image/svg+xml')).status).toBe(415);
    expect((await send(Buffer.from('<svg onload=alert(1)>'), 'image/png')).status).toBe(422);
    expect((await ticket(id)).messages).toHaveLength(1);
    const sent = await send(png, 'image/png');
    expect(sent.status).toBe(201);
    expect(sent.body.data.has_attachments).toBe(true);
    const message = sent.body.data.messages[1];
    const file = await fetch(`${app.baseUrl}/tickets/${id}/messages/${message.id}/attachment`, { headers: { authorization: `Bearer ${app.organization.sandbox_token}` } });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    expect(file.headers.get('content-disposition')).toBe(`attachment; filename="attachment-${message.id}.png"`);
    expect(file.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await file.arrayBuffer()).equals(png)).toBe(true);
    const first = (await ticket(id)).messages[0]!;
    expect((await fetch(`${app.baseUrl}/tickets/${id}/messages/${first.id}/attachment`, { headers: { authorization: `Bearer ${app.organization.sandbox_token}` } })).status).toBe(404);
  });

  test("the ticket's own customer downloads an agent's attachment from the Portal, as an attachment of ours; nobody else does", async () => {
    const { browser } = await signedIn();
    const id = await contact(browser);
    const pdf = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
    const form = new FormData();
    form.append('body', 'Your statement is attached.');
    form.append('file', new Blob([pdf], { type: 'application/pdf' }), '../../etc/statement<script>.pdf');
    const sent = await fetch(`${app.baseUrl}/tickets/${id}/messages`, { method: 'POST', headers: { authorization: `Bearer ${app.organization.sandbox_token}` }, body: form });
    expect(sent.status).toBe(201);
    const [first, agents] = ((await sent.json()) as { data: { messages: { id: string }[] } }).data.messages;

    const page = await open(browser, `/tickets/${id}`);
    const path = `/tickets/${id}/messages/${agents!.id}/attachment`;
    expect(page.html).toContain(`href="/portal${path}"`);
    expect(page.html).toContain('Download the attachment');
    const file = await fetch(`${portal()}${path}`, { headers: { cookie: browser.cookie } });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(file.headers.get('content-disposition')).toBe(`attachment; filename="attachment-${agents!.id}.pdf"`);
    expect(file.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await file.arrayBuffer()).equals(pdf)).toBe(true);

    // Nobody else: another customer signed in, a guest, no browser session; a message without a file.
    const other = (await signedIn()).browser;
    expect((await fetch(`${portal()}${path}`, { headers: { cookie: other.cookie } })).status).toBe(404);
    expect((await fetch(`${portal()}${path}`, { headers: { cookie: (await guest()).cookie } })).status).toBe(404);
    expect((await fetch(`${portal()}${path}`)).status).toBe(401);
    expect((await fetch(`${portal()}/tickets/${id}/messages/${first!.id}/attachment`, { headers: { cookie: browser.cookie } })).status).toBe(404);
  });
});

