/**
 * What a person sees, measured from Chromium's own geometry of the served SVG (issue 25): the
 * sample organization's diagrams as stored, the same diagrams posted again without positions,
 * and a synthetic diagram of 60+ instances, 80+ relations and a container of 40 children
 * posted without positions. Counted: relations through boxes that are not their ends (or
 * their containers), labels on labels, boxes or boundary titles, names broken inside a word
 * that would fit, children outside their container, overlapping boxes; and for laid-out
 * diagrams the crossings of relations against Graphviz `dot`'s drawing of the same graph
 * with the same box sizes.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import anyTest, { type TestFn } from 'ava';
import { syntheticDiagram } from '../bench/drawing-fixture.js';
import { ARTIFACTS, type BrowserRig, callApi, SAMPLE, useBrowserRig } from './support/browser.js';
import { countProblems, dotCrossings, geometryInPage, type Problems } from './support/drawing-geometry.js';

interface Context extends BrowserRig {
  key: string;
  /** The organization `api` speaks to. */
  org: 'demo' | 'synthetic';
  /** A key of an organization with the default types and no required attributes. */
  emptyKey: string;
}

const test = anyTest as TestFn<Context>;
const browserTest = useBrowserRig(
  test,
  'drawing',
  { demo: { from: SAMPLE, keys: { demo: { label: 'Drawing test' } } }, synthetic: { keys: { synthetic: { label: 'Drawing test' } } } },
  (rig) => ({ key: rig.keys.demo, emptyKey: rig.keys.synthetic, org: 'demo' as const }),
);

/** Crossings of each laid-out diagram, ours and dot's, filled by the tests that draw them. */
const crossings: Array<{ name: string; ours: number; dot: number }> = [];

function api(t: { context: Context }, method: string, path: string, body?: unknown, accept = 'application/json'): Promise<any> {
  return callApi(t.context, t.context.org === 'synthetic' ? t.context.emptyKey : t.context.key, method, path, body, accept);
}

/** The diagram's served SVG, measured in the browser; the page's screenshot goes to test-artifacts/. */
async function measure(t: { context: Context }, diagramId: string, artifact: string): Promise<{ problems: Problems; dot: number }> {
  const model = await api(t, 'GET', '/api/external/model');
  const names: Record<string, string> = Object.fromEntries(model.components.map((c: any) => [c.id, c.name]));
  const diagram = model.diagrams.find((d: any) => d.id === diagramId);
  const svg: string = await api(t, 'GET', `/api/external/diagram/${diagramId}`, undefined, 'image/svg+xml');
  const page = await t.context.browser.newPage({ viewport: { width: 1400, height: 900 } });
  try {
    await page.setContent(`<!doctype html><html><body style="margin:0">${svg}</body></html>`);
    await page.screenshot({ path: join(ARTIFACTS, `${artifact}.png`), fullPage: true });
    const geometry = await geometryInPage(page, names);
    const labels = new Map<string, string>(diagram.relations.map((r: any) => [r.id, r.label ?? '']));
    return { problems: countProblems(geometry), dot: await dotCrossings(geometry, labels) };
  } finally {
    await page.close();
  }
}

function assertClean(t: { deepEqual: (a: unknown, b: unknown, m?: string) => void }, name: string, p: Problems): void {
  t.deepEqual(p.relationsThroughBoxes, [], `${name}: relations through boxes`);
  t.deepEqual(p.labelOverlaps, [], `${name}: label overlaps`);
  t.deepEqual(p.brokenWords, [], `${name}: words broken that would fit`);
  t.deepEqual(p.childrenOutside, [], `${name}: children outside their container`);
  t.deepEqual(p.overlappingBoxes, [], `${name}: overlapping boxes`);
}

/** A diagram as the API serves it, posted again under a new ref with every position and size left out. */
function withoutLayout(d: any, ref: string): unknown {
  return {
    ref,
    name: `${d.name} (laid out)`,
    level: d.level,
    componentInstances: d.componentInstances.map((i: any) => ({
      ref: i.id,
      component: i.component,
      placeholder: i.placeholder,
      isContainer: i.isContainer,
      parent: i.parent,
    })),
    relations: d.relations.map((r: any) => ({
      fromComponentInstance: r.fromComponentInstance,
      toComponentInstance: r.toComponentInstance,
      label: r.label,
    })),
    textareas: d.textareas.map((x: any) => ({ text: x.text })),
  };
}

browserTest(
  'the sample diagrams as stored: no relation through a box, no label on a label or box, no broken word, no child outside, no overlap',
  async (t) => {
    const model = await api(t, 'GET', '/api/external/model');
    t.true(model.diagrams.length >= 4);
    for (const d of model.diagrams) {
      const { problems } = await measure(t, d.id, `drawing-${d.level}`);
      assertClean(t, d.name, problems);
      t.log(`${d.name}: ${problems.crossings} crossings (hand-made layout)`);
    }
  },
);

browserTest('the sample diagrams posted without positions: laid out and drawn clean', async (t) => {
  const model = await api(t, 'GET', '/api/external/model');
  for (const d of model.diagrams) {
    const [posted] = await api(t, 'POST', '/api/external/diagram', [withoutLayout(d, `again-${d.id}`)]);
    const { problems, dot } = await measure(t, posted.id, `drawing-${d.level}-laid-out`);
    assertClean(t, posted.name, problems);
    t.log(`${posted.name}: ${problems.crossings} crossings, dot ${dot}`);
    crossings.push({ name: posted.name, ours: problems.crossings, dot });
  }
});

browserTest('a synthetic diagram of 66 instances, 80+ relations and a container of 40 children, posted without positions', async (t) => {
  t.context.org = 'synthetic';
  const { components, diagram } = syntheticDiagram(66);
  t.true(diagram.componentInstances.length >= 60);
  t.true(diagram.relations.length >= 80, `${diagram.relations.length} relations`);
  await api(t, 'POST', '/api/external/component', components);
  const [posted] = await api(t, 'POST', '/api/external/diagram', [diagram]);
  const children = new Map<string, number>();
  for (const i of posted.componentInstances) if (i.parent) children.set(i.parent, (children.get(i.parent) ?? 0) + 1);
  t.true(Math.max(...children.values()) >= 35);
  const { problems, dot } = await measure(t, posted.id, 'drawing-synthetic');
  assertClean(t, posted.name, problems);
  t.log(`synthetic: ${problems.crossings} crossings, dot ${dot}`);
  await writeFile(join(ARTIFACTS, 'drawing-synthetic.json'), JSON.stringify({ ...problems, dot }, null, 2));
  crossings.push({ name: posted.name, ours: problems.crossings, dot });
});

browserTest('every diagram laid out here crosses its relations no more often than Graphviz dot on the same graph', (t) => {
  t.true(crossings.length >= 5);
  for (const c of crossings) t.true(c.ours <= c.dot, `${c.name}: ${c.ours} crossings, dot ${c.dot}`);
});
