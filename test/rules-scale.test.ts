import test from 'ava';
import { Draft, type WriteOptions } from '../src/model/draft.js';
import { emptyModel } from '../src/model/files.js';
import { checkModel } from '../src/model/rules.js';
import type { Attribute, Model } from '../src/model/types.js';
import { writeAttributes } from '../src/model/write/attributes.js';
import { writeModel } from '../src/model/write/model.js';
import { DEFAULT_TYPES } from '../src/service/orgs.js';

// Model rules must cost what a write touches, not components × attributes (issue 16, point 3).
// The work is counted, not timed: every entry the rules read from the attributes map counts,
// and a budget far below components × attributes stops a quadratic check early.

const ATTRIBUTES = 50_000;
const COMPONENTS = 10_000;
const REQUIRED_FOR_CONTAINERS = 5;

class OverBudget extends Error {}

/** The model's attributes map, counting each entry read (get, or one step of any iteration). */
class CountingMap<K, V> extends Map<K, V> {
  reads = 0;
  budget = Number.POSITIVE_INFINITY;

  private read(): void {
    if (++this.reads > this.budget) throw new OverBudget(`more than ${this.budget} reads of the attributes`);
  }

  override get(key: K): V | undefined {
    this.read();
    return super.get(key);
  }

  override *entries(): MapIterator<[K, V]> {
    for (const entry of super.entries()) {
      this.read();
      yield entry;
    }
  }

  override *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  override *keys(): MapIterator<K> {
    for (const [key] of this.entries()) yield key;
  }

  override [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }

  override forEach(callback: (value: V, key: K, map: Map<K, V>) => void): void {
    for (const [key, value] of this.entries()) callback(value, key, this);
  }

  /** Runs `step` allowing it `budget` reads; returns how many it made. */
  count(budget: number, step: () => unknown): Promise<number> {
    this.reads = 0;
    this.budget = budget;
    return Promise.resolve(step())
      .then(
        () => this.reads,
        (err) => {
          throw err;
        },
      )
      .finally(() => {
        this.budget = Number.POSITIVE_INFINITY;
      });
  }
}

// One count for every write of the test: ids are unique across the organization, kinds included.
let made = 0;

function options(): WriteOptions {
  return { apiContext: '2026-01-01 00:00:00', newId: () => `2000000000000000000${String(made++).padStart(7, '0')}`, layout: 'keep' };
}

function largeModel(): { model: Model; attributes: CountingMap<string, Attribute>; required: Attribute[] } {
  const model = emptyModel({ name: 'Big', slug: 'big', members: [] });
  for (const [i, [slug, name]] of DEFAULT_TYPES.entries()) model.types.set(`type${i}`, { id: `type${i}`, slug, name });
  const attributes = new CountingMap<string, Attribute>();
  const slugs = DEFAULT_TYPES.map(([slug]) => slug);
  for (let i = 0; i < ATTRIBUTES; i++) {
    const id = `1000000000000000000${String(i).padStart(7, '0')}`;
    const required = i < REQUIRED_FOR_CONTAINERS;
    attributes.set(id, {
      id,
      name: `Attribute ${i}`,
      type: 'STRING',
      desc: null,
      required,
      // Most apply to every type, some to one type: both kinds of index entry are exercised.
      forTypes: required ? ['container'] : i % 3 === 0 ? [slugs[i % slugs.length]] : [],
    });
  }
  return { model: { ...model, attributes }, attributes, required: [...attributes.values()].slice(0, REQUIRED_FOR_CONTAINERS) };
}

test('rules at 50,000 attributes: creating 10,000 components, adding an attribute and a cold check read about one entry per attribute or value', async (t) => {
  const { model, attributes, required } = largeModel();
  const values = required.map((a) => ({ id: a.id, value: 'set' }));
  // Linear: the attributes once (to index them) plus the values written; quadratic would be 5e8.
  const budget = 4 * (ATTRIBUTES + COMPONENTS * (REQUIRED_FOR_CONTAINERS + 1));

  const create = new Draft(model, options());
  const components = Array.from({ length: COMPONENTS }, (_, i) => ({
    ref: `c${i}`,
    name: `C ${i}`,
    typeSlug: 'container',
    attributes: values,
  }));
  const created = await attributes.count(budget, () => writeModel(create, { components }, ''));
  t.is(create.model.components.size, COMPONENTS);
  t.log(`create ${COMPONENTS} components: ${created} reads`);

  const add = new Draft(create.model, options());
  const added = await attributes.count(budget, () =>
    writeAttributes(add, [{ name: 'Runbook', type: 'LINK', forTypes: ['container'] }], true),
  );
  t.is(add.changes.length, 1);
  t.log(`add one attribute: ${added} reads`);

  const cold = await attributes.count(budget, () => checkModel(add.model));
  t.log(`check the whole model: ${cold} reads`);

  // The rules still hold where they apply: a container without the required values is refused.
  const missing = new Draft(add.model, options());
  await t.throwsAsync(writeModel(missing, { components: [{ name: 'Bare', typeSlug: 'container' }] }, ''), {
    message: new RegExp(`^Required attribute '${required[0].id}' has no value\\.`),
  });
  const person = new Draft(add.model, options());
  await writeModel(person, { components: [{ name: 'Ada', typeSlug: 'person' }] }, '');
  t.is(person.changes.length, 1, 'a required attribute of containers does not bind a person');
});
