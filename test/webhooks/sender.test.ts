/**
 * One HTTP attempt of a delivery on a kept-alive connection (server/webhooks/sender.ts): an
 * endpoint that closes an idle connection just as our next request goes out on it still gets
 * that request, on a new connection, in the same attempt; an endpoint that closes a new
 * connection without answering has failed the attempt, and is not sent it twice.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { postWebhook } from '../../server/webhooks/sender';

interface Endpoint {
  url: string;
  /** Bodies received, with whether they came on a connection that carried an earlier request. */
  received: { body: string; reused: boolean }[];
  close(): Promise<void>;
}

/** An endpoint that answers 200, except that `dropIf` requests get their connection closed, unanswered. */
async function endpoint(dropIf: (request: { reused: boolean; index: number }) => boolean): Promise<Endpoint> {
  const received: Endpoint['received'] = [];
  const served = new WeakSet<object>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const reused = served.has(request.socket);
      served.add(request.socket);
      received.push({ body: Buffer.concat(chunks).toString(), reused });
      if (dropIf({ reused, index: received.length - 1 })) request.socket.destroy();
      else response.end();
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    close: () => new Promise<void>((closed) => server.close(() => closed())).then(() => server.closeAllConnections()),
  };
}

const options = { timeoutMs: 5000, allowInsecure: true };
const post = (url: string, body: string) => postWebhook(url, { 'content-type': 'application/json' }, Buffer.from(body), options);

test('a request met by the close of a kept-alive connection is sent again at once on a new one, within the same attempt', async () => {
  // The endpoint closes the kept-alive connection as the second request arrives on it.
  const hook = await endpoint(({ reused }) => reused);
  try {
    expect(await post(hook.url, '{"n":1}')).toEqual({ ok: true, status: 200, error: null });
    expect(await post(hook.url, '{"n":2}')).toEqual({ ok: true, status: 200, error: null });
    expect(hook.received).toEqual([
      { body: '{"n":1}', reused: false },
      { body: '{"n":2}', reused: true },
      { body: '{"n":2}', reused: false },
    ]);
  } finally {
    await hook.close();
  }
});

test('an endpoint that closes a new connection without an answer fails the attempt, and gets the request once', async () => {
  const hook = await endpoint(() => true);
  try {
    const result = await post(hook.url, '{"n":1}');
    expect(result).toMatchObject({ ok: false, status: null, error: 'socket hang up' });
    expect(hook.received).toEqual([{ body: '{"n":1}', reused: false }]);
  } finally {
    await hook.close();
  }
});
