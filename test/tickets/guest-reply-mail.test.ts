/**
 * A guest's question gets its answer, by real SMTP: a guest who found their account writes from
 * "Contact us" (no e-mail asked: the verified customer's address is used), an agent replies
 * through the API, and the reply's e-mail - written to the communications log as `ticket_reply`
 * under its Regulation F rules, sent by the mail job to an SMTP server on 127.0.0.1 - carries a
 * link, not the reply; the link opens the Portal, where the thread shows the reply.
 */
import { startTestApp, type TestApp } from '../support/test-app';
import { customerWithAccount, unique, uniquePhone } from '../support/fixtures';
import { plainText, startSmtpServer, type SmtpServer } from '../support/smtp';
import { organizationQuery, portalGuest, textOf } from '../portal-logins/portal-guest';

jest.setTimeout(180_000);

let sink: SmtpServer;
let app: TestApp;

beforeAll(async () => {
  sink = await startSmtpServer();
  app = await startTestApp({ smtpUrl: sink.url });
  // 12:00 in Austin on a Monday: outside quiet hours, so the reply leaves at once.
  app.clock.set(new Date('2026-12-07T18:00:00Z'));
  await app.startWorkers();
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await sink?.close();
});

test("a found guest's question: the agent's reply is e-mailed (a link, not the text) and the link opens the thread", async () => {
  const email = `${unique('guest')}@mail.debt-collection.example`;
  const made = await customerWithAccount(app.sandbox, { email, ssn_last4: '4417', phone: uniquePhone('512'), address: { postal_code: '78704', line1: '12 Elm St', city: 'Austin', state: 'TX' } });
  const guest = portalGuest(app);
  expect((await guest.get(`/?${organizationQuery(app)}`)).status).toBe(200);
  expect(await guest.post('/find', { phone: made.customer.phone!, ssn_last4: '4417' })).toMatchObject({ status: 303, location: '/portal/accounts' });
  const contact = await guest.get('/contact');
  // Verified: the customer's address on file is used, none is asked.
  expect(contact.html).not.toContain('name="email"');
  const written = await guest.post('/contact', { category: 'need-info-about-my-account', subject: 'A letter I received', body: 'Is this letter from you?' });
  expect(written.status).toBe(303);
  const ticketId = /\/tickets\/([0-9a-f-]{36})$/.exec(written.location!)![1]!;
  const ticket = (await app.sandbox.GET('/tickets/{id}', { params: { path: { id: ticketId } } })).data!.data;
  expect(ticket).toMatchObject({ email, source: 'collect', customer: { id: made.customer.id } });

  const answer = 'Yes: it is the validation notice we must send you.';
  expect((await app.sandbox.POST('/tickets/{id}/messages', { params: { path: { id: ticketId } }, body: { body: answer } })).response.status).toBe(201);

  const mail = await sink.waitFor(email, (message) => /replied to your message/.test(plainText(message)));
  const text = plainText(mail);
  expect(text).not.toContain(answer);
  expect(text).toContain('To stop receiving these e-mails, open:');
  const link = /(http\S+\/s\/[A-Za-z0-9_-]+\/accounts)/.exec(text)![1]!;
  const logged = (await app.sandbox.GET('/communications', { params: { query: { customer_id: made.customer.id, kind: 'ticket_reply', limit: 10 } } })).data!.data;
  expect(logged).toHaveLength(1);
  expect(logged[0]).toMatchObject({ to: email, status: 'sent' });

  // Another browser, with only the e-mail's link.
  const reader = portalGuest(app);
  const opened = await reader.get(link);
  expect(opened.status).toBe(303);
  let page = await reader.get(opened.location!);
  if (page.status === 303 && page.location!.includes('/verify')) {
    await reader.get(page.location!);
    expect((await reader.post('/verify', { ssn_last4: '4417', next: '/portal/accounts' })).status).toBe(303);
    page = await reader.get('/accounts');
  }
  expect(page.status).toBe(200);
  expect(textOf(page.html)).toContain('A letter I received (new reply)');
  const thread = await reader.get(`/tickets/${ticketId}`);
  expect(thread.status).toBe(200);
  expect(textOf(thread.html)).toContain(answer);
});
