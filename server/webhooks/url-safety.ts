/**
 * Server-side request forgery guard for webhook URLs. A webhook makes this service send
 * requests wherever its owner says, so, unless the operator allows insecure URLs (local
 * testing), a URL must be https and its host must not be, or resolve to, an address inside
 * our own network: loopback, private, link-local (cloud metadata lives there), unspecified,
 * multicast, reserved. It is checked when the webhook is written, and again at every
 * delivery, where the connection is pinned to the very address that was checked, so a name
 * that resolves elsewhere a second time (DNS rebinding) cannot slip through.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT (Alibaba's metadata at 100.100.100.200)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata at 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments (Oracle's metadata at 192.0.0.192)
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['::', 96], // IPv4-compatible (deprecated)
  ['64:ff9b::', 96], // NAT64 of any IPv4 address
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local (AWS metadata at fd00:ec2::254)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

// Kept apart: BlockList compares IPv4 addresses with IPv6 rules as IPv4-mapped, so this rule
// among the others would match every IPv4 address.
const ipv4Mapped = new BlockList();
ipv4Mapped.addSubnet('::ffff:0:0', 96, 'ipv6');

/**
 * The IPv4 address inside an IPv4-mapped IPv6 address, in either spelling (URL parsing writes
 * [::ffff:127.0.0.1] as [::ffff:7f00:1]); null when it cannot be read, which is refused.
 */
function embeddedIpv4(address: string): string | null {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (dotted) return dotted;
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return null;
  const [high, low] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Why an IP address may not receive webhooks, or undefined when it may. */
export function blockedAddress(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return `${address} is not an IP address`;
  const reason = `${address} is a loopback, private, link-local, metadata or reserved address`;
  if (family === 6 && ipv4Mapped.check(address, 'ipv6')) {
    // An IPv4-mapped IPv6 address is the IPv4 address in disguise.
    const inner = embeddedIpv4(address);
    return inner === null || blocked.check(inner, 'ipv4') ? reason : undefined;
  }
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6') ? reason : undefined;
}

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolveAll, reject) => dnsLookup(hostname, { all: true }, (error, addresses) => (error ? reject(error) : resolveAll(addresses))));

/** The URL's host without the brackets of an IPv6 literal. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

const CREATE_LOOKUP_MS = 2000;

/** What an integrator trying a receiver on their own machine needs to read in the refusal. */
const LOCAL_HINT = ' (for a receiver on your own machine, start the service with WEBHOOK_ALLOW_INSECURE_URLS=true: local testing only)';

/**
 * The problem with a webhook URL, as a 422 message on `url`, or undefined. A name that does
 * not resolve within two seconds is accepted: the endpoint may not be up yet, and every
 * delivery checks the address again before connecting.
 */
export async function webhookUrlProblem(raw: string, allowInsecure: boolean, resolver: Resolver = systemResolver): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (allowInsecure) return url.protocol === 'https:' || url.protocol === 'http:' ? undefined : 'must be an http or https URL';
  if (url.protocol !== 'https:') return `must be an https URL${LOCAL_HINT}`;
  const host = hostOf(url);
  if (isIP(host)) return blockedAddress(host) && `must not point to a loopback, private, link-local or metadata address${LOCAL_HINT}`;
  let timer: NodeJS.Timeout | undefined;
  const addresses = await Promise.race([
    resolver(host).catch(() => []),
    new Promise<LookupAddress[]>((done) => (timer = setTimeout(() => done([]), CREATE_LOOKUP_MS))),
  ]).finally(() => clearTimeout(timer));
  return addresses.some((entry) => blockedAddress(entry.address))
    ? 'must not resolve to a loopback, private, link-local or metadata address'
    : undefined;
}

export class RefusedAddress extends Error {}

/**
 * Before a delivery: refuses a URL that is not https or names a blocked IP literal (the
 * connection does not look those up, so `pinnedLookup` would not see them).
 */
export function deliveryUrlProblem(url: URL): string | undefined {
  if (url.protocol !== 'https:') return 'refused: not an https URL';
  const host = hostOf(url);
  const problem = isIP(host) ? blockedAddress(host) : undefined;
  return problem && `refused: ${problem}`;
}

/**
 * The `lookup` of a delivery's connection: resolves the name, refuses it when any of its
 * addresses is blocked, and hands the connection exactly the addresses it checked.
 */
export function pinnedLookup(resolver: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolver(hostname).then(
      (addresses) => {
        const bad = addresses.map((entry) => blockedAddress(entry.address)).find(Boolean);
        if (bad || addresses.length === 0) {
          callback(new RefusedAddress(`refused: ${hostname}: ${bad ?? 'no address'}`), '', 0);
          return;
        }
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((entry) => entry.family === options.family) : addresses;
        const usable = wanted.length > 0 ? wanted : addresses;
        if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
        else callback(null, usable[0]!.address, usable[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}
