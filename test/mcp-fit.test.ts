/**
 * Tool answers fitted to the answer size (src/mcp/fit.ts), as properties over generated values:
 * the JSON fits, keeps its shape, keeps the first items of every list and says how long each
 * shortened list was.
 */
import test from 'ava';
import fc from 'fast-check';
import { fitted } from '../src/mcp/fit.js';

const budget = 2_000;
const resource = fc.record({
  kind: fc.constantFrom('component', 'diagram'),
  id: fc.string({ maxLength: 30 }),
  name: fc.string({ maxLength: 80 }),
});
const commit = fc.record({
  id: fc.stringMatching(/^[0-9a-f]{40}$/),
  summary: fc.string({ maxLength: 300 }),
  resources: fc.array(resource, { maxLength: 200 }),
});

test('property: what is fitted fits, keeps the first items in order, and names the length of what it shortened', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(fc.array(commit, { minLength: 1, maxLength: 30 }), (commits) => {
        const { value, cut } = fitted(commits, budget);
        const size = JSON.stringify(value).length;
        if (!cut) return value === commits && size <= budget;
        if (value.length === 0 || value.length > commits.length) return false;
        // Whole commits kept: the first ones, each with its id; its resources the first of its own.
        return (
          (size <= budget || value.length === 1) &&
          value.every((kept, i) => {
            const whole = commits[i]!;
            const total = (kept as { resourcesTotal?: number }).resourcesTotal;
            const resourcesKept = kept.resources.every((r, j) => JSON.stringify(r) === JSON.stringify(whole.resources[j]));
            return (
              kept.id === whole.id &&
              resourcesKept &&
              (total === undefined ? kept.resources.length === whole.resources.length : total === whole.resources.length)
            );
          })
        );
      }),
    ),
  );
});

test('one item too large alone is shortened inside: a commit keeps its id and loses resources, a text its end', (t) => {
  const huge = {
    id: 'c1',
    summary: 's'.repeat(50),
    resources: Array.from({ length: 500 }, (_, i) => ({ id: `r${i}`, name: `resource ${i}` })),
  };
  const { value, cut } = fitted([huge], budget);
  t.true(cut);
  t.is(value.length, 1);
  t.is(value[0]!.id, 'c1');
  t.is((value[0] as { resourcesTotal?: number }).resourcesTotal, 500);
  t.true(value[0]!.resources.length > 10 && value[0]!.resources.length < 500);
  t.deepEqual(value[0]!.resources[0], { id: 'r0', name: 'resource 0' });
  t.true(JSON.stringify(value).length <= budget);

  const long = fitted({ id: 'x', desc: 'd'.repeat(10_000) }, budget);
  t.true(long.cut);
  t.true(long.value.desc.endsWith('…'));
  t.true(JSON.stringify(long.value).length <= budget);
  // A value that fits is the value itself.
  const small = { a: [1, 2, 3] };
  t.is(fitted(small, budget).value, small);
});
