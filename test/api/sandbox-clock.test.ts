/**
 * The sandbox clock (tag Sandbox): per organization, starting at real time, moved only
 * forward, read by every rule of time in the sandbox; production has no such path.
 */
import { expectFieldError, newCustomer, newSession, openLink, unique } from '../support/fixtures';
import { dateOf } from '../support/dates';
import { startTestApp, type TestApp } from '../support/test-app';
import { createOrganization } from '../../server/organizations/organization-repo';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

const DAY = 86_400_000;

async function sandboxNow(): Promise<Date> {
  const { data, response } = await app.sandbox.GET('/sandbox/clock');
  expect(response.status).toBe(200);
  expect(data!.data.status).toBe('ready');
  return new Date(data!.data.now);
}

describe('GET /sandbox/clock', () => {
  test('a sandbox that never moved its clock answers the real time, ready', async () => {
    expect((await sandboxNow()).getTime()).toBe(app.clock.now().getTime());
  });

  test('a production token gets 404, for reading and for moving, and production time stays real', async () => {
    const read = await app.api.GET('/sandbox/clock');
    expect(read.response.status).toBe(404);
    expect(read.error).toMatchObject({ errorCode: 'not_found' });
    const move = await app.api.POST('/sandbox/clock', { body: { advance_to: new Date(app.clock.now().getTime() + DAY).toISOString() } });
    expect(move.response.status).toBe(404);
    expect((await sandboxNow()).getTime()).toBe(app.clock.now().getTime());
  });
});

describe('POST /sandbox/clock', () => {
  test('moves the clock forward; it keeps running from there at real speed, for this organization only', async () => {
    const before = await sandboxNow();
    const target = new Date(before.getTime() + 3 * DAY);
    const moved = await app.sandbox.POST('/sandbox/clock', { body: { advance_to: target.toISOString() } });
    expect(moved.response.status).toBe(200);
    expect(moved.data!.data).toEqual({ now: target.toISOString(), status: 'ready' });
    expect((await sandboxNow()).getTime()).toBe(target.getTime());

    app.clock.advance(60_000);
    expect((await sandboxNow()).getTime()).toBe(target.getTime() + 60_000);

    // Another organization's sandbox keeps real time.
    const { sandbox_token } = await createOrganization(app.db, unique('Other sandbox'));
    const other = await app.clientFor(sandbox_token).GET('/sandbox/clock');
    expect(new Date(other.data!.data.now).getTime()).toBe(app.clock.now().getTime());
  });

  test('refuses a time not later than the clock, or more than 2 years ahead, with 422 on advance_to', async () => {
    const now = await sandboxNow();
    for (const advance_to of [now.toISOString(), new Date(now.getTime() - DAY).toISOString(), new Date(now.getTime() + 732 * DAY).toISOString()]) {
      const refused = await app.sandbox.POST('/sandbox/clock', { body: { advance_to } });
      expect(refused.response.status).toBe(422);
      expectFieldError(refused.error, 'advance_to');
    }
    expect((await sandboxNow()).getTime()).toBe(now.getTime());
  });

  test('rules of time in the sandbox read its clock: a date of birth "in the future" in production is past in the sandbox', async () => {
    const now = await sandboxNow();
    const realToday = dateOf(app.clock.now());
    const inTenDays = dateOf(new Date(app.clock.now().getTime() + 10 * DAY));
    const body = { name: 'Ivy Chen', email: 'ivy.chen@mail.debt-collection.example', date_of_birth: inTenDays };
    expect((await app.api.POST('/customers', { body })).response.status).toBe(422);
    await app.sandbox.POST('/sandbox/clock', { body: { advance_to: new Date(now.getTime() + 20 * DAY).toISOString() } });
    expect((await app.sandbox.POST('/customers', { body })).response.status).toBe(201);

    // A plan starting "today" in real time is in the past on the moved sandbox clock.
    const customer = await newCustomer(app.sandbox);
    const account = await app.sandbox.POST('/debt-accounts', {
      body: {
        customer_id: customer.id,
        external_id: unique('ACC'),
        location_id: 'LOC-SANDBOX-01',
        location_name: 'Lakeside Medical Center',
        balance: 90000,
        payment_plan: { frequency: 'monthly', start_date: realToday, amount: 15000 },
      },
    });
    expect(account.response.status).toBe(422);
    expectFieldError(account.error, 'payment_plan.start_date');
  });

  test('a session expires when the sandbox clock passes its expiry: its link is gone after the move', async () => {
    const customer = await newCustomer(app.sandbox);
    const session = await newSession(app.sandbox, { customer_id: customer.id });
    // The link opens (303 to the page, with its browser session) while the session is valid.
    expect((await openLink(session.portal_url)).status).toBe(303);
    const now = await sandboxNow();
    expect(Date.parse(session.valid_till!)).toBe(now.getTime() + DAY);
    await app.sandbox.POST('/sandbox/clock', { body: { advance_to: new Date(now.getTime() + DAY + 1).toISOString() } });
    expect((await openLink(session.portal_url)).status).toBe(410);
  });
});
