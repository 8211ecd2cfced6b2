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
import { redactUrl } from '../credentials.js';

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

/** A url's most characters (code points, as JSON Schema's `maxLength` counts them). */
export const MAX_URL_LENGTH = 2048;
/**
 * How a url starts: its scheme written out, in any case, with `//`. Checked on the text as given,
 * as the OpenAPI document states it: a URL parser takes more for http (` https:x`, `https:x`).
 */
export const WEBHOOK_URL_START = /^[Hh][Tt][Tt][Pp][Ss]?:\/\//;

/** Whether an address is one a webhook may not reach without --webhook-allow-private. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (family !== 6) return true;
  const groups = ipv6Groups(address);
  if (groups === null) return true;
  const embedded = embeddedIpv4(groups);
  if (embedded !== null) return isPrivateAddress(embedded);
  const [g0, g1] = groups as [number, number];
  // Site-local (fec0::/10, deprecated but routed by some networks), Teredo (2001::/32, whose
  // client address is hidden), local-use NAT64 (64:ff9b:1::/48, the IPv4 address anywhere in it).
  if ((g0 & 0xffc0) === 0xfec0 || (g0 === 0x2001 && g1 === 0) || (g0 === 0x64 && g1 === 0xff9b && groups[2] === 1)) return true;
  return BLOCKED.check(address, 'ipv6');
}

/**
 * The IPv4 address an IPv6 one carries, judged as itself: IPv4-mapped (::ffff:a.b.c.d),
 * IPv4-compatible (::a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d), NAT64 (64:ff9b::a.b.c.d), 6to4 (2002:aabb:ccdd::), in any of
 * IPv6's spellings (hex groups or a dotted tail). Null when it carries none.
 */
function embeddedIpv4(groups: readonly number[]): string | null {
  const zero = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  const quad = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  if (zero(0, 5) && (groups[5] === 0xffff || groups[5] === 0)) return quad(groups[6]!, groups[7]!);
  if (zero(0, 4) && groups[4] === 0xffff && groups[5] === 0) return quad(groups[6]!, groups[7]!); // IPv4-translated (SIIT)
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zero(2, 6)) return quad(groups[6]!, groups[7]!);
  if (groups[0] === 0x2002) return quad(groups[1]!, groups[2]!);
  return null;
}

/** The eight 16-bit groups of an IPv6 address (isIP already said it is one), or null. */
function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return null;
  const groups = [...left, ...Array(tail === undefined ? 0 : missing).fill('0'), ...right].map((g) => Number.parseInt(g, 16));
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/** Checks a subscription's url as given (400 with the reason), resolving its host once. */
export async function checkTargetUrl(text: unknown, allowPrivate: boolean): Promise<string> {
  if (typeof text !== 'string' || text === '') throw new ApiError(400, "A webhook needs a 'url'.");
  if (text.length > MAX_URL_LENGTH && (text.length > 2 * MAX_URL_LENGTH || [...text].length > MAX_URL_LENGTH)) {
    throw new ApiError(400, `Webhook url is too long (at most ${MAX_URL_LENGTH} characters).`);
  }
  if (!WEBHOOK_URL_START.test(text)) throw new ApiError(400, `Invalid webhook url '${redactUrl(text)}': use http:// or https://.`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ApiError(400, `Invalid webhook url '${redactUrl(text)}'.`);
  }
  if (allowPrivate) return url.href;
  const addresses = await resolve(url.hostname).catch(() => {
    throw new ApiError(400, `Webhook url '${redactUrl(text)}': its host '${url.hostname}' does not resolve.`);
  });
  const blocked = addresses.find(isPrivateAddress);
  if (blocked !== undefined) {
    throw new ApiError(
      400,
      `Webhook url '${redactUrl(text)}' points to a private or loopback address (${blocked}); the server refuses such targets unless started with --webhook-allow-private.`,
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
