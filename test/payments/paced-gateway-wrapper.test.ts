/**
 * The paced wrapper (server/gateway/paced-gateway.ts) around a tiny fake gateway and a fake pace:
 * a test of the wrapper, not of any processor. Each call takes a slot before it reaches the
 * gateway; a 429 is sent again after its Retry-After (holding back the pace for every process)
 * or after a full-jitter backoff, and answered as the processor finally answers; a processor
 * that keeps answering 429 is answered GatewayUnanswered (the charge stays processing for
 * recovery), never a decline; anything else passes through untouched.
 */
import {
  GatewayRateLimited,
  GatewayUnanswered,
  type ChargeOutcome,
  type PaymentGateway,
} from '../../server/gateway/gateway';
import { pacedFetch, pacedGateway, paceOf } from '../../server/gateway/paced-gateway';
import type { ProcessorPace } from '../../server/gateway/processor-pace';

/** What happened, in order: slots taken, pauses, waits, and the gateway's calls. */
type Step = string;

function fakePace(steps: Step[]): ProcessorPace {
  return {
    key: 'processor-config:fake',
    perSecond: 100,
    take: async () => void steps.push('slot'),
    pause: async (ms) => void steps.push(`pause ${ms}`),
    hold: (work) => work(),
    open: () => true,
    admit: () => () => undefined,
    stats: () => ({ statements: 0, granted: 0, late: 0 }),
  };
}

/** A gateway whose charge answers from `answers` in turn (an Error is thrown), then succeeds; the rest is not called here. */
function fakeGateway(steps: Step[], answers: (ChargeOutcome | Error)[]): PaymentGateway {
  const notHere = () => Promise.reject(new Error('not called by these tests'));
  return {
    name: 'fake',
    tokenizeCard: notHere,
    tokenizeBankAccount: notHere,
    async charge(token, amount, key, ...more: unknown[]) {
      steps.push(`charge ${key}${more.length > 0 ? ` ${JSON.stringify(more)}` : ''}`);
      const answer = answers.shift() ?? { status: 'succeeded', reference: 'pay_1' };
      if (answer instanceof Error) throw answer;
      return answer;
    },
    void: notHere,
    refund: notHere,
    find: async (key) => {
      steps.push(`find ${key}`);
      return undefined;
    },
    outcome: notHere,
  };
}

/** A clock that only the sleeps move, and the sleeps it saw. */
function fakeTime(steps: Step[]) {
  let now = 0;
  return {
    now: () => now,
    sleep: async (ms: number) => {
      steps.push(`wait ${ms}`);
      now += ms;
    },
  };
}

test('wrapper: each call takes a slot of the pace before it reaches the gateway, with all its arguments', async () => {
  const steps: Step[] = [];
  const gateway = pacedGateway(fakeGateway(steps, []), fakePace(steps), fakeTime(steps));
  const charged = (gateway.charge as (...args: unknown[]) => Promise<ChargeOutcome>)('tok_1', 500, 'ch_1', { offSession: true });
  await expect(charged).resolves.toEqual({ status: 'succeeded', reference: 'pay_1' });
  await gateway.find('ch_2');
  expect(steps).toEqual(['slot', 'charge ch_1 [{"offSession":true}]', 'slot', 'find ch_2']);
  expect(gateway.name).toBe('fake');
  expect(paceOf(gateway)?.key).toBe('processor-config:fake');
});

test('wrapper: a 429 storm is sent again after each Retry-After (the pace held back for everyone) and answered as the processor then answers', async () => {
  const steps: Step[] = [];
  const storm = [new GatewayRateLimited('429', 1000), new GatewayRateLimited('429', 2000), new GatewayRateLimited('429', 500)];
  const gateway = pacedGateway(fakeGateway(steps, [...storm, { status: 'failed', reference: 'pay_2', code: 'insufficient_funds', message: 'The card has insufficient funds.' }]), fakePace(steps), fakeTime(steps));
  await expect(gateway.charge('tok_1', 500, 'ch_1')).resolves.toEqual({ status: 'failed', reference: 'pay_2', code: 'insufficient_funds', message: 'The card has insufficient funds.' });
  expect(steps).toEqual([
    'slot', 'charge ch_1', 'pause 1000', 'wait 1000',
    'slot', 'charge ch_1', 'pause 2000', 'wait 2000',
    'slot', 'charge ch_1', 'pause 500', 'wait 500',
    'slot', 'charge ch_1',
  ]);
});

test('wrapper: a 429 without Retry-After waits an exponential backoff with full jitter (a random share of a doubling ceiling, at most maxBackoffMs)', async () => {
  const steps: Step[] = [];
  const storm = Array.from({ length: 7 }, () => new GatewayRateLimited('429'));
  const gateway = pacedGateway(fakeGateway(steps, storm), fakePace(steps), { ...fakeTime(steps), random: () => 0.5, baseBackoffMs: 100, maxBackoffMs: 2000 });
  await expect(gateway.charge('tok_1', 500, 'ch_1')).resolves.toEqual({ status: 'succeeded', reference: 'pay_1' });
  expect(steps.filter((step) => step.startsWith('wait'))).toEqual(['wait 50', 'wait 100', 'wait 200', 'wait 400', 'wait 800', 'wait 1000', 'wait 1000']);
  expect(steps.filter((step) => step.startsWith('pause'))).toEqual([]);
  expect(steps.filter((step) => step === 'slot')).toHaveLength(8);
});

test('wrapper: a processor that keeps answering 429 is answered GatewayUnanswered once maxWaitMs would pass (asked again later), never a decline', async () => {
  const steps: Step[] = [];
  const forever = Array.from({ length: 1000 }, () => new GatewayRateLimited('429', 4000));
  const gateway = pacedGateway(fakeGateway(steps, forever), fakePace(steps), { ...fakeTime(steps), maxWaitMs: 10_000 });
  const answer = gateway.charge('tok_1', 500, 'ch_1');
  await expect(answer).rejects.toBeInstanceOf(GatewayUnanswered);
  await expect(answer).rejects.not.toBeInstanceOf(GatewayRateLimited);
  // 4 s, 8 s; a third wait would pass 10 s: given up after three tries.
  expect(steps.filter((step) => step.startsWith('charge'))).toHaveLength(3);
  expect(steps.filter((step) => step.startsWith('wait'))).toEqual(['wait 4000', 'wait 4000']);
});

test('wrapper: no answer (a timeout, a 5xx) and other errors pass through at once, not sent again', async () => {
  const steps: Step[] = [];
  const unanswered = new GatewayUnanswered('Stripe did not answer: 503');
  const gateway = pacedGateway(fakeGateway(steps, [unanswered]), fakePace(steps), fakeTime(steps));
  await expect(gateway.charge('tok_1', 500, 'ch_1')).rejects.toBe(unanswered);
  expect(steps).toEqual(['slot', 'charge ch_1']);
});

test('wrapper: a pace that cannot be read sends nothing and answers GatewayUnanswered', async () => {
  const steps: Step[] = [];
  const broken = { ...fakePace(steps), take: () => Promise.reject(new Error('connection refused')) };
  const gateway = pacedGateway(fakeGateway(steps, []), broken, fakeTime(steps));
  await expect(gateway.charge('tok_1', 500, 'ch_1')).rejects.toBeInstanceOf(GatewayUnanswered);
  expect(steps).toEqual([]);
});

test("wrapper: slots per request, the adapter's own HTTP requests take them (pacedFetch); the wrapper only waits out 429s", async () => {
  const steps: Step[] = [];
  const gateway = pacedGateway(fakeGateway(steps, [new GatewayRateLimited('429', 100)]), fakePace(steps), { ...fakeTime(steps), slots: 'per-request' });
  await gateway.charge('tok_1', 500, 'ch_1');
  expect(steps).toEqual(['charge ch_1', 'pause 100', 'wait 100', 'charge ch_1']);

  const fetched: Step[] = [];
  const paced = pacedFetch(fakePace(fetched), async (input) => {
    fetched.push(`fetch ${String(input)}`);
    return new Response('{}');
  });
  await paced('http://127.0.0.1:1/v1/payment_intents');
  await paced('http://127.0.0.1:1/v1/payment_intents/pi_1/confirm');
  expect(fetched).toEqual(['slot', 'fetch http://127.0.0.1:1/v1/payment_intents', 'slot', 'fetch http://127.0.0.1:1/v1/payment_intents/pi_1/confirm']);
});
