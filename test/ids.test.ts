/**
 * Generated ids (src/model/ids.ts, CONTRACT §2): creation time first, so that they sort in the
 * order they were made, and at least 64 random bits each — also the ids made in one millisecond,
 * which a request creating many resources makes by the thousand: each of those is the previous
 * one plus a random step, not plus one, so no id tells the next.
 */
import test from 'ava';
import { ID_PATTERN, newId } from '../src/model/ids.js';

const BASE32 = '0123456789abcdefghjkmnpqrstvwxyz';
const randomPart = (id: string) => [...id.slice(10)].reduce((value, digit) => value * 32n + BigInt(BASE32.indexOf(digit)), 0n);

test('ids made in one millisecond sort in the order made, each a random step (about 2^63) past the one before', (t) => {
  const now = Date.now() + 60_000;
  const ids = Array.from({ length: 5_000 }, () => newId(now));
  t.true(ids.every((id) => ID_PATTERN.test(id)));
  t.deepEqual([...ids].sort(), ids, 'in the order made');
  t.is(new Set(ids).size, ids.length);
  const steps = ids.slice(1).map((id, i) => randomPart(id) - randomPart(ids[i]!));
  t.true(
    steps.every((step) => step > 0n),
    'each one past the one before',
  );
  // A step of 64 random bits: below 2^48 for one in 65,536; all 4,999 of them are far past one.
  t.true(steps.filter((step) => step < 1n << 48n).length <= 3, 'steps are random, not one');
  const mean = steps.reduce((sum, step) => sum + step, 0n) / BigInt(steps.length);
  t.true(mean > 1n << 62n && mean < 1n << 64n, `mean step ${mean}`);
});

test('a millisecond that runs out of room goes on in the next: ids still sort in the order made', (t) => {
  const now = Date.now() + 120_000;
  // Far more than fit in one millisecond's room (2^80 over steps of about 2^63 leaves ~2^16).
  const ids = Array.from({ length: 200_000 }, () => newId(now));
  t.deepEqual([...ids].sort(), ids);
  t.is(new Set(ids).size, ids.length);
});
