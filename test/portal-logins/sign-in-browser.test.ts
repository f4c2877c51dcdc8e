/**
 * Portal accounts and one-step checkout as a person sees them, in Chromium (one browser for the
 * file, one page whose cookies are cleared per visitor), with axe on every page: register,
 * confirm, sign in; the lock's message; a reset link used twice; pay with an account number.
 */
import type { Page } from 'playwright-core';
import { seriousViolations } from '../support/browser';
import { startPortalInChromium, type PortalInChromium } from '../support/portal-chromium';
import type { TestApp } from '../support/test-app';
import { customerWithAccount, unique, uniquePhone } from '../support/fixtures';
import { latestLink, organizationQuery } from './portal-guest';

jest.setTimeout(180_000);

let portal: PortalInChromium;
let app: TestApp;
let page: Page;

beforeAll(async () => {
  ({ app, page } = portal = await startPortalInChromium({}, { subscribe: false }));
}, 120_000);

afterAll(() => portal?.stop());

async function accessible(name: string): Promise<void> {
  expect(await seriousViolations(page, name)).toEqual([]);
}

async function debtor() {
  const phone = uniquePhone('512');
  return customerWithAccount(
    app.sandbox,
    { ssn_last4: '4417', date_of_birth: '1984-03-12', phone, address: { postal_code: '78704', line1: '12 Elm St', city: 'Austin', state: 'TX' } },
    { balance: 50000, external_account_number: unique('AN') },
  );
}

const entry = () => `${app.origin}/portal/?${organizationQuery(app)}`;

async function signIn(email: string, password: string): Promise<void> {
  await page.goto(entry());
  await page.getByRole('link', { name: 'Sign in' }).click();
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

test('a guest creates an account, confirms the e-mail by its link, signs in and sees the accounts; five wrong passwords show the lock', async () => {
  const made = await debtor();
  const email = `${unique('maria')}@mail.debt-collection.example`;
  await page.context().clearCookies();
  await page.goto(entry());
  await page.getByRole('link', { name: 'Create an account' }).click();
  await accessible('register');
  await page.getByLabel('Phone').fill(made.customer.phone!);
  await page.getByLabel('Last 4 of SSN').fill('4417');
  await page.getByRole('button', { name: 'Continue' }).click();
  await accessible('register-account');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill('short');
  await page.getByRole('button', { name: 'Create my account' }).click();
  expect(await page.locator('#err-password').textContent()).toBe('Use at least 12 characters.');
  await accessible('register-account-error');
  await page.getByLabel('Password').fill('violet tractor sings');
  await page.getByRole('button', { name: 'Create my account' }).click();
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Check your e-mail');

  await page.goto(await latestLink(app.sandbox, made.customer.id, email, /Confirm/));
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Your e-mail is confirmed');
  await accessible('confirmed');
  await page.getByRole('link', { name: 'Sign in' }).click();
  await accessible('sign-in');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill('violet tractor sings');
  await page.getByRole('button', { name: 'Sign in' }).click();
  expect(new URL(page.url()).pathname).toBe('/portal/accounts');
  expect(await page.locator('main').textContent()).toContain(made.account.external_account_number!);

  await page.context().clearCookies();
  for (let i = 1; i <= 4; i++) {
    await signIn(email, `wrong password ${i}`);
    expect(await page.getByRole('alert').textContent()).toBe('The e-mail or the password is not right. Check them and try again.');
  }
  await signIn(email, 'wrong password 5');
  expect(await page.getByRole('alert').textContent()).toContain('signing in with this e-mail is locked after 5 wrong tries');
  await accessible('sign-in-locked');
});

test('a reset link sets a new password, then says it was used and offers a new one; one-step checkout leads to the checkout', async () => {
  const made = await debtor();
  const email = `${unique('reset')}@mail.debt-collection.example`;
  await page.context().clearCookies();
  await page.goto(`${app.origin}/portal/register?${organizationQuery(app)}`);
  await page.getByLabel('Phone').fill(made.customer.phone!);
  await page.getByLabel('Date of birth').fill('1984-03-12');
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill('violet tractor sings');
  await page.getByRole('button', { name: 'Create my account' }).click();

  await page.goto(`${app.origin}/portal/sign-in?${organizationQuery(app)}`);
  await page.getByRole('link', { name: 'Forgot password' }).click();
  await accessible('forgot-password');
  await page.getByLabel('E-mail').fill(email);
  await page.getByRole('button', { name: 'Send me a link' }).click();
  const link = await latestLink(app.sandbox, made.customer.id, email, /Reset/);
  await page.goto(link);
  await accessible('reset-password');
  await page.getByLabel('New password').fill('new shelf of lanterns');
  await page.getByRole('button', { name: 'Save my new password' }).click();
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Your password is changed');
  await page.goto(link);
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('This link was already used');
  await accessible('reset-used');
  await page.getByRole('link', { name: 'Send me a new link' }).click();
  expect(new URL(page.url()).pathname).toBe('/portal/forgot-password');

  await page.context().clearCookies();
  await page.goto(entry());
  await page.getByRole('link', { name: 'Pay with your account number' }).click();
  await accessible('one-step');
  await page.getByLabel('Account number').fill(made.account.external_account_number!);
  await page.getByLabel('ZIP code').fill('78704');
  await page.getByRole('button', { name: 'Continue to payment' }).click();
  expect(new URL(page.url()).pathname).toBe(`/portal/accounts/${made.account.id}/checkout`);
  await accessible('one-step-checkout');
});

test('"Sign out" in the header ends the visit on the server: the page says so, and the old cookie opens nothing after', async () => {
  const made = await debtor();
  const email = `${unique('out')}@mail.debt-collection.example`;
  await page.context().clearCookies();
  await page.goto(`${app.origin}/portal/register?${organizationQuery(app)}`);
  await page.getByLabel('Phone').fill(made.customer.phone!);
  await page.getByLabel('Date of birth').fill('1984-03-12');
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill('violet tractor sings');
  await page.getByRole('button', { name: 'Create my account' }).click();
  await page.goto(await latestLink(app.sandbox, made.customer.id, email, /Confirm/));
  await page.context().clearCookies();
  await signIn(email, 'violet tractor sings');
  expect(new URL(page.url()).pathname).toBe('/portal/accounts');
  const signOut = page.getByRole('navigation', { name: 'Portal' }).getByRole('button', { name: 'Sign out' });
  expect(await signOut.isVisible()).toBe(true);
  await page.screenshot({ path: '/tmp/portal27-signed-in-375.png' });
  const cookie = (await page.context().cookies()).find((c) => c.name === 'portal_session')!;
  expect(cookie).toBeDefined();

  await signOut.click();
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('You are signed out');
  await accessible('signed-out');
  await page.screenshot({ path: '/tmp/portal27-signed-out-375.png' });
  expect((await page.context().cookies()).find((c) => c.name === 'portal_session')).toBeUndefined();
  // No sign-out in the header once signed out.
  expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);

  // The cookie a thief kept from before is worth nothing: the server ended the session.
  const replayed = await fetch(`${app.origin}/portal/accounts`, { headers: { cookie: `portal_session=${cookie.value}` }, redirect: 'manual' });
  expect(replayed.status).toBe(401);
  await page.goto(`${app.origin}/portal/accounts`);
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Please sign in again');
});
