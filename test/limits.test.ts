/**
 * Bounds that say what they are (issue 15.2): elements per write, instances, relations and text
 * areas per diagram, components per organization. Each is refused with 413 and a message that
 * names the limit and the `serve` option raising it, and changes nothing.
 */
import test from 'ava';
import { DEFAULT_LIMITS } from '../src/limits/limits.js';
import { TestServer } from './support/server.js';
import { accepted, refused } from './support/models.js';

const C = '/api/external/component';
const D = '/api/external/diagram';
const M = '/api/external/model';

const instances = (n: number) => Array.from({ length: n }, (_, i) => ({ ref: `i${i}`, placeholder: `Box ${i}` }));
const chain = (n: number) => Array.from({ length: n }, (_, i) => ({ fromComponentInstance: 'i0', toComponentInstance: `i${(i % 3) + 1}` }));

test('the defaults are generous: 2,000 instances per diagram', (t) => {
  t.is(DEFAULT_LIMITS.diagramInstances, 2000);
  t.true(DEFAULT_LIMITS.diagramRelations >= 4000);
});

test('a diagram over its instance, relation or text area limit is refused with 413 naming the limit; at the limit it is accepted', async (t) => {
  const s = await TestServer.start({ limits: { diagramInstances: 5, diagramRelations: 6, diagramTextareas: 2 } });
  try {
    await refused(
      t,
      s,
      'POST',
      D,
      [{ name: 'Big', level: 'C2', componentInstances: instances(6) }],
      413,
      "Diagram 'Big' has 6 component instances; the limit is 5 component instances per diagram " +
        '(raise it with: c4store serve --max-diagram-instances N).',
    );
    await refused(
      t,
      s,
      'POST',
      D,
      [{ name: 'Busy', level: 'C2', componentInstances: instances(4), relations: chain(7) }],
      413,
      "Diagram 'Busy' has 7 relations; the limit is 6 relations per diagram (raise it with: c4store serve --max-diagram-relations N).",
    );
    await refused(
      t,
      s,
      'POST',
      D,
      [{ name: 'Notes', level: 'C2', textareas: [{ text: 'a' }, { text: 'b' }, { text: 'c' }] }],
      413,
      "Diagram 'Notes' has 3 text areas; the limit is 2 text areas per diagram (raise it with: c4store serve --max-diagram-textareas N).",
    );
    // Through /model as well, and the whole request is refused.
    await refused(
      t,
      s,
      'POST',
      M,
      { components: [{ name: 'A' }], diagrams: [{ name: 'Big', level: 'C2', componentInstances: instances(6) }] },
      413,
      "Diagram 'Big' has 6 component instances; the limit is 5 component instances per diagram " +
        '(raise it with: c4store serve --max-diagram-instances N).',
    );
    await accepted(t, s, 'POST', D, [
      { name: 'Full', level: 'C2', componentInstances: instances(5), relations: chain(6), textareas: [{ text: 'a' }, { text: 'b' }] },
    ]);
  } finally {
    await s.close();
  }
});

test('a write with more elements than the limit is refused with 413 before any work; nested diagram elements count', async (t) => {
  const s = await TestServer.start({ limits: { writeElements: 10 } });
  try {
    await refused(
      t,
      s,
      'POST',
      C,
      Array.from({ length: 11 }, (_, i) => ({ name: `C${i}` })),
      413,
      'This request has 11 elements; the limit is 10 elements per write (raise it with: c4store serve --max-write-elements N).',
    );
    // 2 diagrams, 8 instances, 1 text area.
    await refused(
      t,
      s,
      'POST',
      D,
      [
        { name: 'D', level: 'C2', componentInstances: instances(8), textareas: [{ text: 'x' }] },
        { name: 'E', level: 'C1' },
      ],
      413,
      'This request has 11 elements; the limit is 10 elements per write (raise it with: c4store serve --max-write-elements N).',
    );
    await refused(
      t,
      s,
      'POST',
      M,
      {
        components: Array.from({ length: 6 }, (_, i) => ({ name: `C${i}` })),
        diagrams: [{ name: 'D', level: 'C1', componentInstances: instances(4) }],
      },
      413,
      'This request has 11 elements; the limit is 10 elements per write (raise it with: c4store serve --max-write-elements N).',
    );
    await accepted(
      t,
      s,
      'POST',
      C,
      Array.from({ length: 10 }, (_, i) => ({ name: `C${i}` })),
    );
  } finally {
    await s.close();
  }
});

test('at the default limits, 100,000 tags in one write are refused with 413 before their schema check', async (t) => {
  const s = await TestServer.start();
  try {
    await refused(
      t,
      s,
      'POST',
      '/api/external/tag',
      Array.from({ length: 100_000 }, () => ({ name: 1 })),
      413,
      'This request has 100,000 elements; the limit is 50,000 elements per write (raise it with: c4store serve --max-write-elements N).',
    );
  } finally {
    await s.close();
  }
});

test('components beyond the organization limit are refused; an organization at its limit can still be edited', async (t) => {
  const s = await TestServer.start({ limits: { orgComponents: 3 } });
  try {
    const made = await accepted(t, s, 'POST', C, [{ name: 'A' }, { name: 'B' }, { name: 'C' }]);
    await refused(
      t,
      s,
      'POST',
      C,
      [{ name: 'D' }],
      413,
      'The organization would have 4 components; the limit is 3 components per organization ' +
        '(raise it with: c4store serve --max-org-components N).',
    );
    await accepted(t, s, 'POST', C, [{ id: made[0].id, name: 'A renamed' }]);
  } finally {
    await s.close();
  }
});
