/**
 * Every rule of time reads the app's clock, not the machine's: moving the clock moves
 * "not in the future", "today or later" and card expiry with it.
 */
import { expectFieldError, newCustomer, unique } from '../support/fixtures';
import { dateOf } from '../support/dates';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

const DAY = 86_400_000;

describe('rules of time follow the app clock', () => {
  test('a date of birth tomorrow is refused; once the clock passes it, the same date is accepted', async () => {
    const start = app.clock.now();
    const tomorrow = dateOf(new Date(start.getTime() + DAY));
    const refused = await app.api.POST('/customers', { body: { name: 'Ivy Chen', email: 'ivy.chen@mail.debt-collection.example', date_of_birth: tomorrow } });
    expect(refused.response.status).toBe(422);
    expectFieldError(refused.error, 'date_of_birth');

    app.clock.set(new Date(start.getTime() + 2 * DAY));
    try {
      const accepted = await app.api.POST('/customers', { body: { name: 'Ivy Chen', email: 'ivy.chen@mail.debt-collection.example', date_of_birth: tomorrow } });
      expect(accepted.response.status).toBe(201);
      expect(accepted.data!.data.date_of_birth).toBe(tomorrow);
    } finally {
      app.clock.set(start);
    }
  });

  test('a plan starting today is accepted; after the clock moves a day on, the same start date is in the past', async () => {
    const start = app.clock.now();
    const customer = await newCustomer(app.api);
    const body = (externalId: string) => ({
      customer_id: customer.id,
      external_id: externalId,
      location_id: 'LOC-CLOCK-01',
      location_name: 'Lakeside Medical Center',
      balance: 90000,
      payment_plan: { frequency: 'monthly' as const, start_date: dateOf(start), amount: 15000 },
    });
    expect((await app.api.POST('/debt-accounts', { body: body(unique('ACC')) })).response.status).toBe(201);

    app.clock.set(new Date(start.getTime() + DAY));
    try {
      const late = await app.api.POST('/debt-accounts', { body: body(unique('ACC')) });
      expect(late.response.status).toBe(422);
      expectFieldError(late.error, 'payment_plan.start_date');
    } finally {
      app.clock.set(start);
    }
  });

  test('a card expiring this month is accepted and chargeable; in a later month it is refused and no longer chargeable', async () => {
    const start = app.clock.now();
    const customer = await newCustomer(app.api);
    const card = {
      card_holder: 'Ivy Chen',
      card_number: '4242424242424242',
      card_expiration_month: start.getUTCMonth() + 1,
      card_expiration_year: start.getUTCFullYear() % 100,
      card_security_code: '123',
    };
    const added = await app.api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card } });
    expect(added.response.status).toBe(201);
    const chargeable = async () => {
      const { data } = await app.api.GET('/customers/{id}', { params: { path: { id: customer.id }, query: { include: 'payment_methods.chargeable' } } });
      return data!.data.payment_methods!.map((method) => method.chargeable);
    };
    expect(await chargeable()).toEqual([true]);

    // The first day of the next month, UTC.
    app.clock.set(new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1)));
    try {
      expect(await chargeable()).toEqual([false]);
      const refused = await app.api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card } });
      expect(refused.response.status).toBe(422);
      expectFieldError(refused.error, 'card.card_expiration_year');
    } finally {
      app.clock.set(start);
    }
  });
});
