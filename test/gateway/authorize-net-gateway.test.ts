/**
 * The Authorize.net adapter against a local server that speaks Authorize.net's JSON API: what
 * each call sends (invoiceNumber, refId, duplicateWindow, in the official SDK's shape), how each
 * answer is read, and how a lost, throttled, refused or late charge ends. The processor's clock
 * and ours are the test's: no real minute passes.
 */
import { randomUUID } from 'node:crypto';
import { GatewayRateLimited, GatewayRefusal, GatewayUnanswered } from '../../server/gateway/gateway';
import { authorizeNetGateway, checkAuthorizeNetCredentials, invoiceNumberOf, type AuthorizeNetGateway } from '../../server/gateway/authorize-net/authorize-net-gateway';
import { lateArrivalActions, sweepLateArrivals } from '../../server/gateway/authorize-net/authorize-net-sweep';
import { startAuthorizeNetServer, type AuthorizeNetServer } from '../support/authorize-net-server';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { APIContracts, APIControllers } = require('authorizenet');

const credentials = { apiLoginId: '5KP3u95bQpv', transactionKey: '346HZ32z3fP4hTG2', signatureKey: 'A'.repeat(128) };
const WINDOW = 120;
const TIMEOUT_MS = 5_000;

let server: AuthorizeNetServer;
let gateway: AuthorizeNetGateway;
let now: Date;

/** Moves both clocks (ours and the processor's) forward. */
const advance = (ms: number) => {
  now = new Date(now.getTime() + ms);
  server.now = now;
};

beforeEach(async () => {
  server = await startAuthorizeNetServer(credentials);
  now = new Date('2026-12-05T15:00:00Z');
  server.now = now;
  gateway = authorizeNetGateway(credentials, { apiUrl: server.url, timeoutMs: TIMEOUT_MS, duplicateWindowSeconds: WINDOW, clock: () => now });
});
afterEach(() => server.close());

const card = (number = '4111111111111111') => gateway.tokenizeCard({ number, expMonth: 8, expYear: 2031 });
const bank = () => gateway.tokenizeBankAccount({ routingNumber: '110000000', accountNumber: '000123456789' });
const charges = () => server.sent('createTransactionRequest').filter((each) => each.transactionRequest.transactionType === 'authCaptureTransaction');

/** The same charge request built with the official SDK's contract classes, as its README shows. */
function sdkCharge(chargeId: string, customerProfileId: string, paymentProfileId: string): unknown {
  const auth = new APIContracts.MerchantAuthenticationType();
  auth.setName(credentials.apiLoginId);
  auth.setTransactionKey(credentials.transactionKey);
  const paymentProfile = new APIContracts.PaymentProfile();
  paymentProfile.setPaymentProfileId(paymentProfileId);
  const profile = new APIContracts.CustomerProfilePaymentType();
  profile.setCustomerProfileId(customerProfileId);
  profile.setPaymentProfile(paymentProfile);
  const order = new APIContracts.OrderType();
  order.setInvoiceNumber(invoiceNumberOf(chargeId));
  order.setDescription(`Charge ${chargeId}`);
  const setting = new APIContracts.SettingType();
  setting.setSettingName('duplicateWindow');
  setting.setSettingValue(String(WINDOW));
  const settings = new APIContracts.ArrayOfSetting();
  settings.setSetting([setting]);
  const transaction = new APIContracts.TransactionRequestType();
  transaction.setTransactionType(APIContracts.TransactionTypeEnum.AUTHCAPTURETRANSACTION);
  transaction.setAmount('15.00');
  transaction.setProfile(profile);
  transaction.setOrder(order);
  transaction.setTransactionSettings(settings);
  const request = new APIContracts.CreateTransactionRequest();
  request.setMerchantAuthentication(auth);
  request.setRefId(invoiceNumberOf(chargeId));
  request.setTransactionRequest(transaction);
  const { clientId, ...sent } = JSON.parse(JSON.stringify(request.getJSON())).createTransactionRequest;
  // The SDK names itself in clientId when it executes; we send none.
  expect(clientId).toBeNull();
  return sent;
}

/** The same profile request built with the SDK's classes. */
function sdkProfile(merchantCustomerId: string): unknown {
  const auth = new APIContracts.MerchantAuthenticationType();
  auth.setName(credentials.apiLoginId);
  auth.setTransactionKey(credentials.transactionKey);
  const creditCard = new APIContracts.CreditCardType();
  creditCard.setCardNumber('4111111111111111');
  creditCard.setExpirationDate('2031-08');
  const payment = new APIContracts.PaymentType();
  payment.setCreditCard(creditCard);
  const paymentProfile = new APIContracts.CustomerPaymentProfileType();
  paymentProfile.setCustomerType(APIContracts.CustomerTypeEnum.INDIVIDUAL);
  paymentProfile.setPayment(payment);
  const profile = new APIContracts.CustomerProfileType();
  profile.setMerchantCustomerId(merchantCustomerId);
  profile.setDescription('Saved card');
  profile.setPaymentProfiles([paymentProfile]);
  const request = new APIContracts.CreateCustomerProfileRequest();
  request.setMerchantAuthentication(auth);
  request.setProfile(profile);
  request.setValidationMode(APIContracts.ValidationModeEnum.NONE);
  const { clientId, ...sent } = JSON.parse(JSON.stringify(request.getJSON())).createCustomerProfileRequest;
  expect(clientId).toBeNull();
  return sent;
}

describe('a card charge', () => {
  test('approved: a CIM profile, then one authCaptureTransaction carrying our id as invoiceNumber and refId, with the duplicate window, in the SDK’s shape', async () => {
    const token = await card();
    const chargeId = randomUUID();
    const outcome = await gateway.charge(token, 1500, chargeId);

    expect(outcome).toEqual({ status: 'succeeded', reference: server.transactions[0]!.transId });
    const [profile] = server.sent('createCustomerProfileRequest');
    expect(JSON.stringify(profile)).toBe(JSON.stringify(sdkProfile(profile!.profile.merchantCustomerId)));
    expect(token).not.toContain('4111');
    const [sent] = charges();
    const [, customerProfileId, paymentProfileId] = /^anet_card_(\d+)_(\d+)$/.exec(token)!;
    expect(sent!.refId).toBe(chargeId.replace(/-/g, '').slice(0, 20));
    expect(sent!.transactionRequest.order.invoiceNumber).toBe(sent!.refId);
    expect(sent!.transactionRequest.transactionSettings).toEqual({ setting: [{ settingName: 'duplicateWindow', settingValue: '120' }] });
    // Element for element and in the schema's order: what the SDK would have posted.
    expect(JSON.stringify(sent)).toBe(JSON.stringify(sdkCharge(chargeId, customerProfileId!, paymentProfileId!)));
  });

  test.each([
    ['4000000000000002', 'card_declined', 'This transaction has been declined.'],
    ['4000000000009995', 'card_declined', 'This transaction has been declined.'],
    ['4000000000000069', 'expired_card', 'The credit card has expired.'],
    ['4000000000000127', 'incorrect_cvc', 'This transaction has been declined.'],
    ['4000000000000119', 'processing_error', 'An error occurred during processing. Please try again in 5 minutes.'],
  ])('card %s is declined as %s, with the processor’s words kept', async (number, code, text) => {
    const outcome = await gateway.charge(await card(number), 1500, randomUUID());
    expect(outcome).toMatchObject({ status: 'failed', code });
    expect(outcome.status === 'failed' && outcome.message).toContain(text);
  });

  test('held for review by the fraud filters: pending, then settled once approved', async () => {
    const held = await gateway.charge(await card('4000000000000259'), 1500, randomUUID());
    expect(held).toMatchObject({ status: 'pending', checkAfterSeconds: 86_400 });
    expect(await gateway.outcome(held.reference)).toMatchObject({ status: 'pending' });
    server.review(held.reference, true);
    server.settle();
    expect(await gateway.outcome(held.reference)).toEqual({ status: 'settled' });
  });

  test('a token the adapter did not make is refused, and nothing is sent', async () => {
    await expect(gateway.charge('tok_card_x', 1500, randomUUID())).rejects.toBeInstanceOf(GatewayRefusal);
    expect(charges()).toHaveLength(0);
  });
});

describe('an answer lost after the processor charged', () => {
  test('the charge is unanswered; find() finds it once by invoice number; a repeat within the window is the same transaction', async () => {
    const token = await card();
    const chargeId = randomUUID();
    server.behaviour.loseAnswers = 1;
    await expect(gateway.charge(token, 1500, chargeId)).rejects.toBeInstanceOf(GatewayUnanswered);
    expect(server.transactions).toHaveLength(1);

    advance(30_000);
    const found = await gateway.find(chargeId);
    expect(found).toEqual({ status: 'succeeded', reference: server.transactions[0]!.transId });
    expect(server.sent('getUnsettledTransactionListRequest').length).toBeGreaterThan(0);
    // Asked again (another recovery round): the same answer; recording it twice is refused by the charge's own state.
    expect(await gateway.find(chargeId)).toEqual(found);

    // The same request again within the duplicate window is refused as a duplicate and answered as the first.
    expect(await gateway.charge(token, 1500, chargeId)).toEqual(found);
    expect(server.transactions).toHaveLength(1);
  });

  test('found after the batch settled: read from the settled batch list', async () => {
    const chargeId = randomUUID();
    const token = await card();
    server.behaviour.loseAnswers = 1;
    await expect(gateway.charge(token, 1500, chargeId)).rejects.toBeInstanceOf(GatewayUnanswered);
    advance(3_600_000);
    server.settle();
    expect(await gateway.find(chargeId)).toEqual({ status: 'succeeded', reference: server.transactions[0]!.transId });
    expect(server.sent('getTransactionListRequest').length).toBeGreaterThan(0);
  });
});

describe('a processor that is down for a minute', () => {
  test('charges are unanswered, find() says "not yet known" until the timeout and the window have passed, then "never received"', async () => {
    const token = await card();
    const chargeId = randomUUID();
    server.behaviour.down = true;
    await expect(gateway.charge(token, 1500, chargeId)).rejects.toBeInstanceOf(GatewayUnanswered);
    for (let second = 0; second < 60; second += 15) {
      advance(15_000);
      await expect(gateway.find(chargeId)).rejects.toBeInstanceOf(GatewayUnanswered);
    }
    server.behaviour.down = false;
    // Back up, 60 s after the charge: the lists show nothing, but the window has not passed.
    await expect(gateway.find(chargeId)).rejects.toThrow(/Not yet known/);
    advance(WINDOW * 1000 + TIMEOUT_MS - 60_000);
    expect(await gateway.find(chargeId)).toBeUndefined();
    expect(server.transactions).toHaveLength(0);
  });

  test('no answer within the timeout, or the processor’s own "try again" (E00001): unanswered, never a decline', async () => {
    const token = await card();
    const quick = authorizeNetGateway(credentials, { apiUrl: server.url, timeoutMs: 200, duplicateWindowSeconds: WINDOW, clock: () => now });
    server.behaviour.hang = true;
    await expect(quick.charge(token, 1500, randomUUID())).rejects.toBeInstanceOf(GatewayUnanswered);
    server.behaviour.hang = false;
    server.behaviour.systemError = true;
    await expect(quick.charge(token, 1500, randomUUID())).rejects.toBeInstanceOf(GatewayUnanswered);
    expect(server.transactions).toHaveLength(0);
  });
});

describe('when the charge was sent, for a process that did not send it', () => {
  test('with sentAt (the charge’s updated_at), the window runs from then; without it, from the first time this process asks', async () => {
    const token = await card();
    const chargeId = randomUUID();
    const sentAt = now;
    server.behaviour.down = true;
    await expect(gateway.charge(token, 1500, chargeId)).rejects.toBeInstanceOf(GatewayUnanswered);
    server.behaviour.down = false;
    advance(WINDOW * 1000 + TIMEOUT_MS);

    const told = authorizeNetGateway(credentials, { apiUrl: server.url, timeoutMs: TIMEOUT_MS, duplicateWindowSeconds: WINDOW, clock: () => now, sentAt: async () => sentAt });
    expect(await told.find(chargeId)).toBeUndefined();

    // Another merchant account's process, which never sent it: from its first question.
    const untold = { ...credentials, apiLoginId: 'another' };
    server.acceptAlso(untold);
    const first = authorizeNetGateway(untold, { apiUrl: server.url, timeoutMs: TIMEOUT_MS, duplicateWindowSeconds: WINDOW, clock: () => now });
    await expect(first.find(chargeId)).rejects.toThrow(/Not yet known/);
    advance(WINDOW * 1000 + TIMEOUT_MS);
    // A gateway object made afresh (one per request) remembers the process's first question.
    const again = authorizeNetGateway(untold, { apiUrl: server.url, timeoutMs: TIMEOUT_MS, duplicateWindowSeconds: WINDOW, clock: () => now });
    expect(await again.find(chargeId)).toBeUndefined();
  });
});

describe('a 429 storm', () => {
  test('each throttled request is GatewayRateLimited with its Retry-After, takes nothing, and the charge goes through after it', async () => {
    const token = await card();
    const chargeId = randomUUID();
    server.behaviour.throttle = 5;
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const error = await gateway.charge(token, 1500, chargeId).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(GatewayRateLimited);
      expect((error as GatewayRateLimited).retryAfterMs).toBe(1000);
    }
    expect(server.transactions).toHaveLength(0);
    expect(await gateway.charge(token, 1500, chargeId)).toMatchObject({ status: 'succeeded' });
    expect(charges()).toHaveLength(6);
    expect(server.transactions).toHaveLength(1);
  });
});

describe('a late arrival after the charge was released', () => {
  test.each([
    ['before settlement: voided', false, 'voided'],
    ['after settlement: refunded in full', true, 'refunded'],
  ])('%s', async (_name, settle, expected) => {
    const token = await card();
    const chargeId = randomUUID();
    const since = now;
    server.behaviour.down = true;
    await expect(gateway.charge(token, 2500, chargeId)).rejects.toBeInstanceOf(GatewayUnanswered);
    server.behaviour.down = false;
    advance((WINDOW + 60) * 1000);
    expect(await gateway.find(chargeId)).toBeUndefined();

    // The request was on its way after all: it reaches the processor now.
    await gateway.charge(token, 2500, chargeId);
    if (settle) {
      advance(3_600_000);
      server.settle();
    }
    const arrivals = await gateway.arrivalsSince(since);
    expect(arrivals).toEqual([expect.objectContaining({ invoiceNumber: invoiceNumberOf(chargeId), amount: 2500 })]);
    expect(await gateway.takeBack(arrivals[0]!.reference, `late:${chargeId}`)).toBe(expected);
    const taken = server.transactions.find((each) => each.transId === arrivals[0]!.reference)!;
    if (settle) {
      expect(taken.refunded).toBe(2500);
      expect(server.transactions.find((each) => each.type === 'refundTransaction')!.invoiceNumber).toBe(invoiceNumberOf(`late:${chargeId}`));
    } else expect(taken.status).toBe('voided');
    // Taken back once: asked again, the same answer, and nothing more moves.
    expect(await gateway.takeBack(arrivals[0]!.reference, `late:${chargeId}`)).toBe(expected);
    expect(server.transactions.filter((each) => each.type === 'refundTransaction')).toHaveLength(settle ? 1 : 0);
    expect(taken.refunded).toBe(settle ? 2500 : 0);
  });
});

describe('the late-arrival sweep', () => {
  test('records a charge still processing, gives back one released or recorded with another transaction, leaves the rest', async () => {
    const token = await card();
    const since = now;
    const [processing, released, recorded, declined] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    server.behaviour.loseAnswers = 2;
    await expect(gateway.charge(token, 1000, processing)).rejects.toBeInstanceOf(GatewayUnanswered);
    await expect(gateway.charge(token, 2000, released)).rejects.toBeInstanceOf(GatewayUnanswered);
    const ok = await gateway.charge(token, 3000, recorded);
    await gateway.charge(await card('4000000000000002'), 4000, declined);
    const arrivals = await gateway.arrivalsSince(since);
    expect(arrivals.map((each) => each.invoiceNumber).sort()).toEqual([processing, released, recorded, declined].map(invoiceNumberOf).sort());

    const actions = lateArrivalActions(arrivals, [
      { id: processing, status: 'processing', gatewayReference: null },
      { id: released, status: 'failed', gatewayReference: null },
      { id: recorded, status: 'succeeded', gatewayReference: ok.reference },
      { id: declined, status: 'failed', gatewayReference: null },
    ]);
    const releasedReference = server.transactions.find((each) => each.invoiceNumber === invoiceNumberOf(released))!.transId;
    expect(actions).toEqual({ record: [processing], takeBack: [{ chargeId: released, reference: releasedReference, key: `takeback:${releasedReference}` }] });

    // One round, as recovery runs it: the processing charge recovered, the released one's money voided; run again, nothing more moves.
    const recovered: string[] = [];
    const deps = {
      gateway,
      chargesSince: async () => [
        { id: processing, status: 'processing', gatewayReference: null },
        { id: released, status: 'failed', gatewayReference: null },
        { id: recorded, status: 'succeeded', gatewayReference: ok.reference },
      ],
      recover: async (chargeId: string) => recovered.push(chargeId),
    };
    expect(await sweepLateArrivals(deps, since)).toEqual({ recovered: [processing], takenBack: [{ chargeId: released, reference: releasedReference, result: 'voided' }] });
    expect(server.transactions.find((each) => each.transId === releasedReference)!.status).toBe('voided');
    const voids = () => server.sent('createTransactionRequest').filter((each) => each.transactionRequest.transactionType === 'voidTransaction').length;
    expect(voids()).toBe(1);
    // Run again: nothing more is sent to the processor to move money (its void is seen as done).
    expect((await sweepLateArrivals(deps, since)).takenBack).toEqual([]);
    expect(voids()).toBe(1);
    expect(recovered).toEqual([processing, processing]);
  });
});

describe('void and refund', () => {
  test('void before settlement; a repeat is done already; a settled payment cannot be voided', async () => {
    const token = await card();
    const first = await gateway.charge(token, 1500, randomUUID());
    await gateway.void(first.reference, 'void:1');
    await gateway.void(first.reference, 'void:1');
    expect(server.transactions[0]!.status).toBe('voided');
    const second = await gateway.charge(token, 1500, randomUUID());
    server.settle();
    await expect(gateway.void(second.reference, 'void:2')).rejects.toBeInstanceOf(GatewayRefusal);
  });

  test('refund after settlement (partial, once within the window); before settlement only in full, as a void', async () => {
    const token = await card();
    const settled = await gateway.charge(token, 4000, randomUUID());
    await expect(gateway.refund(settled.reference, 1000, 'refund:a')).rejects.toThrow(/only once it has settled/);
    advance(3_600_000);
    server.settle();
    await gateway.refund(settled.reference, 1000, 'refund:a');
    await gateway.refund(settled.reference, 1000, 'refund:a');
    const refunds = server.sent('createTransactionRequest').filter((each) => each.transactionRequest.transactionType === 'refundTransaction');
    expect(refunds).toHaveLength(2);
    expect(refunds[0]!.transactionRequest).toMatchObject({ amount: '10.00', refTransId: settled.reference, order: { invoiceNumber: invoiceNumberOf('refund:a') } });
    expect(server.transactions.find((each) => each.transId === settled.reference)!.refunded).toBe(1000);

    const fresh = await gateway.charge(token, 4000, randomUUID());
    await gateway.refund(fresh.reference, 4000, 'refund:b');
    expect(server.transactions.find((each) => each.transId === fresh.reference)!.status).toBe('voided');
  });
});

describe('eCheck (ACH)', () => {
  test('a debit is pending, then settled; a returned one answers its NACHA code, and the sweep reports it as a notice', async () => {
    const token = await bank();
    expect(server.sent('createCustomerProfileRequest')[0]!.profile.paymentProfiles[0].payment.bankAccount).toMatchObject({ routingNumber: '110000000', accountNumber: '000123456789', echeckType: 'WEB' });
    const since = now;
    const kept = await gateway.charge(token, 5000, randomUUID());
    const returned = await gateway.charge(token, 7000, randomUUID());
    expect(kept).toMatchObject({ status: 'pending', checkAfterSeconds: 5 * 86_400 });
    expect(await gateway.outcome(kept.reference)).toMatchObject({ status: 'pending' });
    advance(86_400_000);
    server.settle();
    expect(await gateway.outcome(kept.reference)).toEqual({ status: 'settled' });
    server.returnItem(returned.reference, 'R01', 'Insufficient Funds');
    expect(await gateway.outcome(returned.reference)).toEqual({ status: 'returned', code: 'R01', message: 'Insufficient Funds' });
    expect(await gateway.laterNotices(since)).toEqual([
      { noticeId: `anet_returned_${returned.reference}`, reference: returned.reference, kind: 'ach.returned', code: 'R01', message: 'Insufficient Funds' },
    ]);
  });
});

describe('a chargeback', () => {
  test('reported in the settled batches as a notice with a stable id (the same each time it is read); reversed: opened and won', async () => {
    const since = now;
    const paid = await gateway.charge(await card(), 1500, randomUUID());
    advance(3_600_000);
    server.settle();
    server.chargeback(paid.reference);
    const opened = { noticeId: `anet_chargeback_${paid.reference}_opened`, reference: paid.reference, kind: 'chargeback.opened', disputeId: `anet_chargeback_${paid.reference}`, amount: 1500 };
    expect(await gateway.laterNotices(since)).toEqual([expect.objectContaining(opened)]);
    expect(await gateway.laterNotices(since)).toEqual(await gateway.laterNotices(since));
    server.chargeback(paid.reference, true);
    expect(await gateway.laterNotices(since)).toEqual([
      expect.objectContaining(opened),
      { noticeId: `anet_chargeback_${paid.reference}_won`, reference: paid.reference, kind: 'chargeback.won', disputeId: `anet_chargeback_${paid.reference}`, amount: 1500 },
    ]);
  });
});

describe('credentials', () => {
  test('accepted with one authenticateTestRequest; refused with what the processor said', async () => {
    await expect(checkAuthorizeNetCredentials(credentials, { apiUrl: server.url })).resolves.toBeUndefined();
    await expect(checkAuthorizeNetCredentials({ ...credentials, transactionKey: 'wrong' }, { apiUrl: server.url })).rejects.toThrow(
      'User authentication failed due to invalid authentication values.',
    );
    expect(server.requests.map((each) => each.method)).toEqual(['authenticateTestRequest', 'authenticateTestRequest']);
    expect(server.transactions).toHaveLength(0);
  });

  test('the official SDK’s controllers speak to the local server as to Authorize.net', async () => {
    const auth = new APIContracts.MerchantAuthenticationType();
    auth.setName(credentials.apiLoginId);
    auth.setTransactionKey(credentials.transactionKey);
    const request = new APIContracts.AuthenticateTestRequest();
    request.setMerchantAuthentication(auth);
    const controller = new APIControllers.AuthenticateTestController(request.getJSON());
    controller.setEnvironment(server.url);
    await new Promise<void>((done) => controller.execute(done));
    const response = new APIContracts.AuthenticateTestResponse(controller.getResponse());
    expect(response.getMessages().getResultCode()).toBe(APIContracts.MessageTypeEnum.OK);
  });
});
