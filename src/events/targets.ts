/**
 * Where a webhook may be sent. A subscription makes the server send requests to an address of
 * the subscriber's choosing, so by default no address inside the server's own network is
 * allowed (loopback, private, link-local — cloud metadata at 169.254.169.254 —, CGNAT,
 * unique-local and multicast ranges): checked when the subscription is made, and again at the
 * moment of every connection (a name may resolve elsewhere later), on the very address
 * connected to. `serve --webhook-allow-private` lifts it for receivers on a private network.
 */
import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { ApiError } from '../errors.js';

const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv6');
}

export const MAX_URL_LENGTH = 2048;

/** Whether an address is one a webhook may not reach without --webhook-allow-private. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (family !== 6) return true;
  // IPv4 inside IPv6 (::ffff:127.0.0.1, NAT64 64:ff9b::7f00:1): judged as the IPv4 address.
  const embedded = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] ?? mappedHex(address);
  if (embedded !== undefined) return isPrivateAddress(embedded);
  return BLOCKED.check(address, 'ipv6');
}

function mappedHex(address: string): string | undefined {
  const match = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!match) return undefined;
  const [high, low] = [Number.parseInt(match[1], 16), Number.parseInt(match[2], 16)];
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/** Checks a subscription's url as given (400 with the reason), resolving its host once. */
export async function checkTargetUrl(text: unknown, allowPrivate: boolean): Promise<string> {
  if (typeof text !== 'string' || text === '') throw new ApiError(400, "A webhook needs a 'url'.");
  if (text.length > MAX_URL_LENGTH) throw new ApiError(400, `Webhook url is too long (at most ${MAX_URL_LENGTH} characters).`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ApiError(400, `Invalid webhook url '${text}'.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ApiError(400, `Invalid webhook url '${text}': use http or https.`);
  }
  if (allowPrivate) return url.href;
  const addresses = await resolve(url.hostname).catch(() => {
    throw new ApiError(400, `Webhook url '${text}': its host '${url.hostname}' does not resolve.`);
  });
  const blocked = addresses.find(isPrivateAddress);
  if (blocked !== undefined) {
    throw new ApiError(
      400,
      `Webhook url '${text}' points to a private or loopback address (${blocked}); the server refuses such targets unless started with --webhook-allow-private.`,
    );
  }
  return url.href;
}

function resolve(hostname: string): Promise<string[]> {
  const bare = hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(bare)) return Promise.resolve([bare]);
  return new Promise((done, fail) =>
    dnsLookup(bare, { all: true }, (error, found) => (error ? fail(error) : done(found.map((a) => a.address)))),
  );
}

/** A `lookup` for http.request that refuses private addresses: the check is on what is connected to. */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, found) => {
      if (error) return callback(error, []);
      const allowed = allowPrivate ? found : found.filter((a) => !isPrivateAddress(a.address));
      if (allowed.length === 0) {
        const refused = Object.assign(new Error(`${hostname} resolves to a private or loopback address (refused).`), {
          code: 'EPRIVATEADDRESS',
        });
        return callback(refused, []);
      }
      if (options.all) return callback(null, allowed);
      callback(null, allowed[0].address, allowed[0].family);
    });
  };
}
