/**
 * Deterministic randomness for property tests: the same seed gives the same rounds on every run,
 * so a round that fails can be run again and looked at.
 */

/** Numbers in [0, 1) from `seed` (a linear congruential generator: small, fast, and enough for test data). */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

/** Picks one item of a list with `random`. */
export function picker(random: () => number): <T>(list: readonly T[]) => T {
  return (list) => list[Math.floor(random() * list.length)]!;
}
