/**
 * The local Stripe server (test/support/stripe-server.ts) in a process of its own, for
 * `bench:scheduler -- --processor stripe`: a processor stamps each request's arrival on its own
 * clock, not on the event loop of the client that sends it, so the count of requests per second
 * is read where the busy bench process cannot stall it. Started with `fork`; it answers over IPC:
 *   → {latencyMs, secretKey}          ← {url}
 *   → {type: 'received', from, until} ← [[second, requests], …] (by arrival)
 *   → {type: 'intents'}               ← [{charge_id, status}, …]
 */
import { startStripeServer } from '../test/support/stripe-server';

type Ask = { type: 'received'; from: number; until: number } | { type: 'intents' } | { type: 'close' };

process.once('message', async (start: { latencyMs: number; secretKey: string }) => {
  const server = await startStripeServer({ latencyMs: start.latencyMs });
  server.acceptKey(start.secretKey);
  process.on('message', async (ask: Ask) => {
    if (ask.type === 'received') {
      const bySecond = new Map<number, number>();
      for (const { at } of server.requests) if (at >= ask.from && at <= ask.until) bySecond.set(Math.floor(at / 1000), (bySecond.get(Math.floor(at / 1000)) ?? 0) + 1);
      process.send!({ type: 'received', bySecond: [...bySecond] });
    } else if (ask.type === 'intents') {
      process.send!({ type: 'intents', intents: server.intents().map((intent) => ({ charge_id: intent.metadata?.charge_id, status: intent.status })) });
    } else {
      await server.close();
      process.exit(0);
    }
  });
  process.send!({ type: 'ready', url: server.url });
});
