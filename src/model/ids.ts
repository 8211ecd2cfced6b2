import { randomFillSync } from 'node:crypto';

/**
 * Ids are 26 characters of lowercase Crockford base32: 10 for the creation time in ms and
 * 16 (80 bits) of randomness. Fixed length and a time prefix make lexical order creation
 * order, so a git tree listing is already a listing in creation order.
 */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
export const ID_PATTERN = /^[0-9a-hjkmnp-tv-z]{26}$/;

/**
 * Ids a client of the current API form may choose (CONTRACT.md §7): safe as a file name in
 * every clone on every operating system, lowercase only so that no two differ by case alone.
 * Generated ids are a subset of these.
 *
 * The rule is these constants, written once: isClientId and clientIdProblem apply them (the
 * write step words a refusal with CLIENT_ID_RULE), and model/schemas.ts's ClientId states them
 * as JSON Schema (`pattern` and `not`), which the OpenAPI document publishes.
 */
export const CLIENT_ID_PATTERN = /^[a-z0-9][a-z0-9._-]{0,99}$/;
/** What CLIENT_ID_PATTERN lets through and the rule does not: `..` anywhere, a trailing `.`. */
export const CLIENT_ID_EXCLUDED: readonly RegExp[] = [/\.\./, /\.$/];
export const CLIENT_ID_RULE =
  "an id is 1 to 100 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit, " + "without '..' and not ending in '.'";
/** Path segments of the current form that are not ids: `PATCH /<plural>/upsert-batch`. */
export const RESERVED_IDS: readonly string[] = ['upsert-batch'];
/** CON, NUL, COM1… name devices on Windows, with any extension: such a file cannot be checked out there. */
export const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\.|$)/;

/** An id the service made: 26 characters, creation time first. */
export function isGeneratedId(value: string): boolean {
  return ID_PATTERN.test(value);
}

export function isClientId(value: string): boolean {
  return CLIENT_ID_PATTERN.test(value) && !CLIENT_ID_EXCLUDED.some((excluded) => excluded.test(value));
}

/** Why a client may not give a new resource this id, or undefined when it may. */
export function clientIdProblem(value: string): 'rule' | 'reserved' | 'device' | undefined {
  if (!isClientId(value)) return 'rule';
  if (RESERVED_IDS.includes(value)) return 'reserved';
  if (WINDOWS_DEVICE.test(value)) return 'device';
  return undefined;
}

/** Any id a resource of the organization may have: generated, or chosen by a client. */
export function isId(value: string): boolean {
  return isGeneratedId(value) || isClientId(value);
}

/** Crockford's digit for each digit of JavaScript's own base 32 (0-9, a-v). */
const CROCKFORD: Record<string, string> = {};
for (let i = 0; i < 32; i++) CROCKFORD[i.toString(32)] = ALPHABET[i]!;

/** The low `length` base-32 digits of `value`. BigInt's own toString(32) is ~10× a loop of shifts. */
function encode(value: bigint, length: number): string {
  const digits = BigInt.asUintN(5 * length, value).toString(32);
  let out = '';
  for (const digit of digits) out += CROCKFORD[digit];
  return out.padStart(length, '0');
}

const RANDOM_MAX = (1n << 80n) - 1n;
let lastTime = 0;
let lastRandom = 0n;
// Random bytes are drawn a pool at a time: a request creating thousands of resources makes an id each.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomBits64(): bigint {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const value = pool.readBigUInt64BE(poolOffset);
  poolOffset += 8;
  return value;
}

/**
 * Monotonic within this process: ids made in the same millisecond (a request creating many
 * resources) still sort in the order they were made. Each is the one before plus a random step
 * of 64 bits, so that every id has at least 64 random bits (CONTRACT §2) and none tells the next;
 * a millisecond whose room runs out (some 65,000 ids) goes on in the next.
 */
export function newId(now: number = Date.now()): string {
  const step = randomBits64() + 1n;
  if (now <= lastTime && lastRandom + step <= RANDOM_MAX) {
    lastRandom += step;
  } else {
    lastTime = now <= lastTime ? lastTime + 1 : now;
    lastRandom = (randomBits64() << 16n) | (randomBits64() >> 48n); // 80 bits…
    lastRandom >>= 1n; // …less one, headroom for the steps
  }
  return idFrom(lastTime, lastRandom);
}

/** The id made of a creation time in ms and 80 bits of randomness (or of a hash, for fixtures). */
export function idFrom(time: number, random: bigint): string {
  return encode(BigInt(time), 10) + encode(random, 16);
}
