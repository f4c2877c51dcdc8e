import type { LookupAddress } from 'node:dns';
import { blockedAddress, pinnedLookup, webhookUrlProblem, type Resolver } from '../../server/webhooks/url-safety';

const resolves =
  (table: Record<string, string[]>): Resolver =>
  async (hostname) => {
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

describe('blockedAddress', () => {
  test.each(['127.0.0.1', '10.0.0.1', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.100.100.200', '0.0.0.0', '224.0.0.1', '::1', '::', 'fe80::1', 'fd00:ec2::254', '::ffff:10.0.0.1', '::ffff:a9fe:a9fe'])(
    'refuses %s',
    (address) => expect(blockedAddress(address)).toBeDefined(),
  );
  test.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) =>
    expect(blockedAddress(address)).toBeUndefined(),
  );
});

describe('webhookUrlProblem', () => {
  const resolver = resolves({ 'hooks.example.com': ['93.184.216.34'], 'internal.example.com': ['93.184.216.34', '10.1.2.3'] });

  test('a public name is accepted; a name with any private address is refused', async () => {
    expect(await webhookUrlProblem('https://hooks.example.com/x', false, resolver)).toBeUndefined();
    expect(await webhookUrlProblem('https://internal.example.com/x', false, resolver)).toMatch(/must not resolve/);
  });

  test('a name that does not resolve yet is accepted (the delivery checks again)', async () => {
    expect(await webhookUrlProblem('https://not-yet.example.com/x', false, resolver)).toBeUndefined();
  });

  test('with insecure URLs allowed, http and loopback pass', async () => {
    expect(await webhookUrlProblem('http://127.0.0.1:9/x', true, resolver)).toBeUndefined();
    expect(await webhookUrlProblem('ftp://hooks.example.com/x', true, resolver)).toBe('must be an http or https URL');
  });

  test('without, an http or loopback URL is refused with the setting that allows it named', async () => {
    for (const url of ['http://127.0.0.1:9/x', 'https://127.0.0.1:9/x']) {
      expect(await webhookUrlProblem(url, false, resolver)).toMatch(/WEBHOOK_ALLOW_INSECURE_URLS=true/);
    }
  });
});

describe('pinnedLookup', () => {
  const lookup = (resolver: Resolver, all: boolean) =>
    new Promise<{ error: Error | null; address: string | LookupAddress[] }>((done) =>
      pinnedLookup(resolver)('rebind.example.com', { all }, (error, address) => done({ error, address })),
    );

  test('hands the connection exactly the address it checked', async () => {
    expect(await lookup(resolves({ 'rebind.example.com': ['93.184.216.34'] }), false)).toEqual({ error: null, address: '93.184.216.34' });
    expect((await lookup(resolves({ 'rebind.example.com': ['93.184.216.34'] }), true)).address).toEqual([{ address: '93.184.216.34', family: 4 }]);
  });

  test('refuses a name that now resolves inside the network (DNS rebinding after the create-time check)', async () => {
    const { error } = await lookup(resolves({ 'rebind.example.com': ['169.254.169.254'] }), false);
    expect(error?.message).toMatch(/^refused: rebind\.example\.com: 169\.254\.169\.254/);
  });
});
