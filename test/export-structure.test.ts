import test from 'ava';
import { chromium } from 'playwright-core';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UniqueNames } from '../src/export/structurizr.js';
import { CHROMIUM_ARGS, ensureChromium } from './support/chromium.js';
import { TestServer } from './support/server.js';
import { mermaidParse, mermaidShown, plantumlCheck, plantumlMissing, plantumlSvg, tool } from './support/tools.js';

/**
 * The exports keep the C4 structure, measured in the tools that read them: LikeC4's own JSON of
 * each view has exactly its diagram's elements, nesting and relations; Structurizr gets people,
 * systems, containers and components nested, views by level and styles; every format carries the
 * Technology attribute, tags, the archived state, relation descriptions and text areas.
 */

const SAMPLE = join(import.meta.dirname, '..', 'sample-repo');
const BIN = join(import.meta.dirname, '..', 'node_modules', '.bin');

interface SeedInstance {
  id: string;
  component: string | null;
  placeholder: string;
  isContainer: boolean;
  parent: string | null;
}
interface SeedDiagram {
  id: string;
  name: string;
  level: string;
  state: string;
  tags: Array<{ id: string; name: string }> | string[];
  componentInstances: SeedInstance[];
  textareas: Array<{ text: string }>;
  relations: Array<{ fromComponentInstance: string; toComponentInstance: string; label: string | null; desc: string | null }>;
}

let server: TestServer;
let diagrams: SeedDiagram[];
let archived: { id: string; name: string };
let technologyAttribute: string;
let components: Array<{ id: string; name: string; typeSlug: string | null; attributes: Array<{ id: string; value: unknown }> }>;
let unlabelledDiagram: string;

const keyOf = (instance: SeedInstance) => (instance.component === null ? `p_${instance.id}` : `c_${instance.component}`);

test.before(async () => {
  server = await TestServer.start({ slug: 'demo', from: SAMPLE });
  const tag = await server.post('/api/external/tags', { id: 'pci', name: 'PCI scope', color: 'red' });
  if (tag.status !== 201) throw new Error(tag.text);
  const c2 = ((await server.get('/api/external/diagram')).body as SeedDiagram[]).find((d) => d.level === 'C2') as SeedDiagram;
  const inside = c2.componentInstances.find((i) => i.parent !== null && i.component !== null) as SeedInstance;
  const patched = await server.request('PATCH', `/api/external/components/${inside.component}`, {
    body: { tags: ['pci'], state: 'ARCHIVED' },
  });
  if (patched.status !== 200) throw new Error(patched.text);
  archived = { id: patched.body.id, name: patched.body.name };
  const taggedDiagram = await server.request('PATCH', `/api/external/diagrams/${c2.id}`, { body: { tags: ['pci'] } });
  if (taggedDiagram.status !== 200) throw new Error(taggedDiagram.text);
  const extra = await server.post('/api/external/model', {
    components: [
      { ref: 'left', name: 'Left' },
      { ref: 'right', name: 'Right' },
    ],
    diagrams: [
      {
        name: 'Unlabelled',
        level: 'C2',
        componentInstances: [
          { ref: 'l', component: 'left' },
          { ref: 'r', component: 'right' },
        ],
        relations: [{ fromComponentInstance: 'l', toComponentInstance: 'r', label: null, desc: null }],
      },
    ],
  });
  if (extra.status !== 200) throw new Error(extra.text);
  unlabelledDiagram = extra.body.diagrams[0].id;
  diagrams = (await server.get('/api/external/diagram')).body;
  components = (await server.get('/api/external/component')).body;
  const attributes = (await server.get('/api/external/attribute')).body as Array<{ id: string; name: string }>;
  technologyAttribute = (attributes.find((a) => a.name.toLowerCase() === 'technology') as { id: string }).id;
});

test.after.always(() => server?.close());

async function exported(accept: string, path = '/api/external/model'): Promise<string> {
  const reply = await server.get(path, { headers: { accept } });
  if (reply.status !== 200) throw new Error(`${path}: ${reply.status} ${reply.text}`);
  return reply.text;
}

/** The relations a diagram draws, as (from key, to key, label), one per triple, none to itself. */
function drawnRelations(diagram: SeedDiagram): string[] {
  const byId = new Map(diagram.componentInstances.map((i) => [i.id, keyOf(i)]));
  const triples = diagram.relations.map((r) =>
    JSON.stringify([byId.get(r.fromComponentInstance), byId.get(r.toComponentInstance), r.label ?? '']),
  );
  return [...new Set(triples)].filter((t) => {
    const [from, to] = JSON.parse(t);
    return from !== to;
  });
}

interface LikeC4Json {
  elements: Record<
    string,
    { id: string; kind: string; title: string; technology?: string; tags?: string[]; description?: { txt: string } }
  >;
  relations: Record<string, { title?: string; description?: { txt: string }; tags?: string[] }>;
  views: Record<
    string,
    {
      tags?: string[];
      description?: { txt: string } | null;
      nodes: Array<{ id: string; parent: string | null }>;
      edges: Array<{ source: string; target: string; label: string | null; relations: string[] }>;
    }
  >;
}

const last = (fqn: string) => fqn.slice(fqn.lastIndexOf('.') + 1);

test("LikeC4's own JSON of each view: exactly the diagram's elements, nesting and relations; technology, tags, archived state, descriptions, text areas kept", async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'c4store-likec4-structure-'));
  const projects: Record<string, string> = { model: '/api/external/model', c2: '' };
  const c2 = diagrams.find((d) => d.level === 'C2') as SeedDiagram;
  projects.c2 = `/api/external/diagram/${c2.id}`;
  for (const [name, path] of Object.entries(projects)) {
    await mkdir(join(root, name));
    await writeFile(join(root, name, 'likec4.config.json'), JSON.stringify({ name }));
    await writeFile(join(root, name, 'model.c4'), await exported('text/vnd.likec4', path));
  }
  const read = async (project: string): Promise<LikeC4Json> => {
    const out = join(root, `${project}.json`);
    const run = await tool(join(BIN, 'likec4'), ['export', 'json', '--skip-layout', '-p', project, '-o', out, root]);
    t.is(run.code, 0, run.stderr);
    return JSON.parse(await readFile(out, 'utf8'));
  };
  const model = await read('model');

  for (const diagram of diagrams) {
    const view = model.views[`v_${diagram.id}`];
    t.truthy(view, diagram.name);
    const expected = new Set(diagram.componentInstances.map(keyOf));
    t.deepEqual(view.nodes.map((n) => last(n.id)).sort(), [...expected].sort(), `${diagram.name}: elements`);
    const edges = view.edges.map((e) => JSON.stringify([last(e.source), last(e.target), e.label ?? '']));
    t.deepEqual(edges.sort(), drawnRelations(diagram).sort(), `${diagram.name}: relations`);
    // Nesting: a box inside a container instance is a child of that instance's element.
    const nodeOf = new Map(view.nodes.map((n) => [last(n.id), n]));
    const instances = new Map(diagram.componentInstances.map((i) => [i.id, i]));
    for (const instance of diagram.componentInstances) {
      if (instance.parent === null || diagram.level !== 'C2') continue;
      const parent = keyOf(instances.get(instance.parent) as SeedInstance);
      t.is(last(nodeOf.get(keyOf(instance))?.parent ?? ''), parent, `${diagram.name}: ${keyOf(instance)} inside ${parent}`);
    }
    for (const { text } of diagram.textareas) if (text.trim()) t.true(view.description?.txt.includes(text), `${diagram.name}: text area`);
  }
  // The C2 diagram of the sample nests its containers in the software system in the model itself.
  const system = c2.componentInstances.find((i) => i.isContainer) as SeedInstance;
  const systemFqn = Object.keys(model.elements).find((fqn) => last(fqn) === keyOf(system)) as string;
  t.is(model.elements[systemFqn].kind, 'system');
  const nested = c2.componentInstances.filter((i) => i.parent === system.id && i.component !== null);
  t.true(nested.length > 5);
  for (const child of nested) t.truthy(model.elements[`${systemFqn}.${keyOf(child)}`], `${keyOf(child)} inside the system`);

  // Technology, tags, archived state, relation descriptions.
  for (const component of components) {
    const technology = component.attributes.find((a) => a.id === technologyAttribute)?.value;
    const element = Object.values(model.elements).find((e) => last(e.id) === `c_${component.id}`);
    t.is(element?.technology, technology === undefined ? undefined : String(technology), component.name);
  }
  const archivedElement = Object.values(model.elements).find((e) => last(e.id) === `c_${archived.id}`);
  t.deepEqual(archivedElement?.tags?.sort(), ['archived', 't_PCI_scope']);
  t.true(model.views[`v_${c2.id}`].tags?.includes('t_PCI_scope'));
  const descs = diagrams.flatMap((d) => d.relations.filter((r) => r.desc).map((r) => r.desc));
  t.true(descs.length > 0);
  const relationDescs = Object.values(model.relations).map((r) => r.description?.txt);
  for (const desc of descs) t.true(relationDescs.includes(desc as string), desc as string);

  // One diagram alone: the same view.
  const alone = await read('c2');
  const view = alone.views[`v_${c2.id}`];
  t.deepEqual(view.nodes.map((n) => last(n.id)).sort(), [...new Set(c2.componentInstances.map(keyOf))].sort());
  t.deepEqual(view.edges.map((e) => JSON.stringify([last(e.source), last(e.target), e.label ?? ''])).sort(), drawnRelations(c2).sort());
});

/** The model block's element lines, with their depth of nesting (4 spaces a level). */
function dslElements(dsl: string): Map<string, { keyword: string; depth: number; line: string; parent: string | null }> {
  const elements = new Map<string, { keyword: string; depth: number; line: string; parent: string | null }>();
  const stack: string[] = [];
  for (const line of dsl.split('\n')) {
    const element = /^( +)([cp]_\w+) = (person|softwareSystem|container|component) /.exec(line);
    const indent = /^( *)/.exec(line)?.[1].length ?? 0;
    if (element) {
      const depth = (indent - 8) / 4;
      stack.length = depth;
      elements.set(element[2], { keyword: element[3], depth, line, parent: depth === 0 ? null : (stack[depth - 1] ?? null) });
      if (line.endsWith('{')) stack[depth] = element[2];
    }
  }
  return elements;
}

test('Structurizr DSL: people, systems, containers and components nested by the diagrams, views of the kind each level asks for, styles', async (t) => {
  const dsl = await exported('text/vnd.structurizr.dsl');
  const elements = dslElements(dsl);
  const c1 = diagrams.find((d) => d.level === 'C1') as SeedDiagram;
  const c2 = diagrams.find((d) => d.level === 'C2') as SeedDiagram;
  const c3 = diagrams.find((d) => d.level === 'C3') as SeedDiagram;
  const system = c2.componentInstances.find((i) => i.isContainer) as SeedInstance;
  t.is(elements.get(keyOf(system))?.keyword, 'softwareSystem');
  for (const child of c2.componentInstances.filter((i) => i.parent === system.id && i.component !== null)) {
    t.like(elements.get(keyOf(child)), { keyword: 'container', depth: 1, parent: keyOf(system) }, keyOf(child));
  }
  const container = c3.componentInstances.find((i) => i.isContainer) as SeedInstance;
  for (const child of c3.componentInstances.filter((i) => i.parent === container.id && i.component !== null)) {
    const element = elements.get(keyOf(child));
    t.like(element, { keyword: 'component', depth: 2, parent: keyOf(container) }, keyOf(child));
  }
  const people = components.filter((c) => /person/i.test(JSON.stringify(c)) && elements.get(`c_${c.id}`)?.keyword === 'person');
  t.true(people.length > 0, 'people stay people');

  // Technology: the attribute's value as the container's technology token.
  const withTechnology = components.find(
    (c) => elements.get(`c_${c.id}`)?.keyword === 'container' && c.attributes.some((a) => a.id === technologyAttribute),
  );
  const technology = withTechnology?.attributes.find((a) => a.id === technologyAttribute)?.value as string;
  t.true(elements.get(`c_${withTechnology?.id}`)?.line.includes(`"${technology}"`));
  t.true(elements.get(`c_${archived.id}`)?.line.includes('Archived'));

  // Views by level; each view draws only its diagram's relations.
  t.regex(dsl, new RegExp(`^ {8}systemContext c_\\w+ v_${c1.id} \\{$`, 'm'));
  t.regex(dsl, new RegExp(`^ {8}container ${keyOf(system)} v_${c2.id} \\{$`, 'm'));
  t.regex(dsl, new RegExp(`^ {8}component ${keyOf(container)} v_${c3.id} \\{$`, 'm'));
  t.regex(dsl, /^ {8}systemLandscape v_index \{$/m);
  for (const diagram of diagrams) t.true(dsl.includes(`exclude "relationship.tag!=v_${diagram.id}"`), diagram.name);
  t.true(dsl.includes('!impliedRelationships false'));
  t.regex(dsl, /^ {4}styles \{$/m);
  t.regex(dsl, /element "Database" \{\n\s+shape Cylinder/);
  t.regex(dsl, /element "Archived" \{\n\s+opacity 50/);
  // Relation descriptions.
  const desc = diagrams.flatMap((d) => d.relations).find((r) => r.desc)?.desc as string;
  t.true(dsl.includes(`"Description" "${desc}"`));
});

test('Structurizr names stay unique in linear work: 20,000 namesakes cost two look-ups each', (t) => {
  const names = new UniqueNames();
  const given = Array.from({ length: 20_000 }, () => names.name('', 'Payment API'));
  t.is(new Set(given.map((n) => n.toLowerCase())).size, 20_000);
  t.is(given[1], 'Payment API (2)');
  t.true(names.probes <= 2 * 20_000, `${names.probes} look-ups`);
  // Names that take the numbers first cost one more look-up each, not a scan per namesake.
  const crowded = new UniqueNames();
  for (let n = 2; n <= 1_000; n++) crowded.name('', `Gateway (${n})`);
  const later = Array.from({ length: 1_000 }, () => crowded.name('', 'Gateway'));
  t.is(later[1], 'Gateway (1001)');
  t.true(crowded.probes <= 999 + 2 * 1_000 + 1_000, `${crowded.probes} look-ups`);
  // Scopes: containers of two systems may share a name.
  const scoped = new UniqueNames();
  t.is(scoped.name('c_a', 'API'), 'API');
  t.is(scoped.name('c_b', 'API'), 'API');
});

test('PlantUML: an unlabelled relation draws no stray "="; relation descriptions and text areas are drawn', async (t) => {
  const missing = await plantumlMissing();
  if (missing) {
    t.log(`SKIPPED LOUDLY: ${missing}`);
    t.pass();
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), 'c4store-plantuml-structure-'));
  const drawn = async (id: string): Promise<string[]> => {
    const file = join(dir, `${id}.puml`);
    await writeFile(file, await exported('text/x-plantuml', `/api/external/diagram/${id}`));
    t.is((await plantumlCheck([file])).code, 0);
    t.is((await plantumlSvg([file])).code, 0);
    const svg = await readFile(join(dir, `v_${id}.svg`), 'utf8');
    return Array.from(svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g), (m) => m[1].replace(/&quot;/g, '"').replace(/&amp;/g, '&'));
  };
  const unlabelled = await drawn(unlabelledDiagram);
  t.false(
    unlabelled.some((text) => /^[=*]+$/.test(text.trim()) || text.trim() === ''),
    JSON.stringify(unlabelled),
  );
  const withText = diagrams.find((d) => d.textareas.length > 0 && d.relations.some((r) => r.desc)) as SeedDiagram;
  const texts = (await drawn(withText.id)).join(' ').replace(/\s+/g, ' ');
  const desc = withText.relations.find((r) => r.desc)?.desc as string;
  t.true(texts.includes(desc.replace(/\s+/g, ' ').slice(0, 30)), `${desc} in ${texts}`);
  const note = withText.textareas[0].text.split('\n')[0];
  t.true(texts.includes(note.replace(/\s+/g, ' ').slice(0, 30)), `${note} in ${texts}`);
});

test("Mermaid: a layout config, the Technology attribute, tags and relation descriptions as Mermaid's parser reads them", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'c4store-mermaid-structure-'));
  const c2 = diagrams.find((d) => d.level === 'C2') as SeedDiagram;
  const file = join(dir, 'c2.mmd');
  await writeFile(file, await exported('text/vnd.mermaid', `/api/external/diagram/${c2.id}`));
  const run = await mermaidParse([file]);
  t.is(run.code, 0, run.stderr);
  const [parsed] = run.parsed;
  t.true(parsed.layout.shapeInRow >= 2 && parsed.layout.shapeInRow <= 5);
  t.is(parsed.layout.boundaryInRow, 1, 'a boundary of ten boxes gets a row of its own');
  const archivedShape = parsed.shapes.find((s) => s.alias === `c_${archived.id}`);
  t.is(archivedShape?.tags, 'archived,PCI scope');
  t.is(archivedShape?.fontColor, '#777777');
  // Mermaid's System and Person shapes have no technology; containers and components do.
  for (const shape of parsed.shapes) {
    const component = components.find((c) => `c_${c.id}` === shape.alias && c.typeSlug !== 'software-system' && c.typeSlug !== 'person');
    const technology = component?.attributes.find((a) => a.id === technologyAttribute)?.value;
    if (technology !== undefined) t.is(mermaidShown(shape.techn), String(technology), shape.alias);
  }
  const descs = c2.relations.filter((r) => r.desc).map((r) => r.desc);
  for (const desc of descs)
    t.true(
      parsed.rels.some((r) => mermaidShown(r.descr) === desc),
      desc as string,
    );
});

test("Mermaid's renderer in Chromium draws the whole model: every diagram, every component, no box over another", async (t) => {
  const executablePath = await ensureChromium();
  if (executablePath === null) {
    t.log('SKIPPED LOUDLY: no chromium');
    t.pass();
    return;
  }
  const text = await exported('text/vnd.mermaid');
  const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage();
    await page.setContent('<html><body><div id="drawing"></div></body></html>');
    await page.addScriptTag({ path: join(import.meta.dirname, '..', 'node_modules', 'mermaid', 'dist', 'mermaid.min.js') });
    // A script in the page, as text: what tsx compiles would refer to its own helpers there.
    const drawn = (await page.evaluate(`(async () => {
      mermaid.initialize({ startOnLoad: false });
      const { svg } = await mermaid.render('model', ${JSON.stringify(text)});
      const holder = document.getElementById('drawing');
      holder.innerHTML = svg;
      return {
        shapes: Array.from(holder.querySelectorAll('g.c4-shape'), (g) => {
          const r = g.getBoundingClientRect();
          return { id: g.id, text: g.textContent ?? '', x: r.x, y: r.y, width: r.width, height: r.height };
        }),
        text: holder.textContent ?? '',
      };
    })()`)) as { shapes: Array<{ id: string; text: string; x: number; y: number; width: number; height: number }>; text: string };
    for (const diagram of diagrams) t.true(drawn.text.includes(diagram.name), diagram.name);
    for (const component of components)
      t.true(
        drawn.shapes.some((s) => s.text.includes(component.name)),
        component.name,
      );
    const overlapping: string[] = [];
    for (const [i, a] of drawn.shapes.entries()) {
      for (const b of drawn.shapes.slice(i + 1)) {
        const apart = a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y;
        if (!apart) overlapping.push(`${a.id} / ${b.id}`);
      }
    }
    t.deepEqual(overlapping, []);
  } finally {
    await browser.close();
  }
});

test('titles of punctuation alone, blank titles and a container holding a box of its own component: PlantUML checks and Mermaid parses them', async (t) => {
  const own = await TestServer.start({ slug: 'titles' });
  t.teardown(() => own.close());
  const titles = ['Semi; colon', '#hash; and %', '{', '/', '- -', '🙂', ' ', ''];
  const made = await own.post('/api/external/model', {
    components: [
      { ref: 'orders', name: 'Orders API', typeSlug: 'container' },
      { ref: 'handler', name: 'Handler', typeSlug: 'component' },
    ],
    diagrams: [
      ...titles.map((name) => ({ name, level: 'C1', componentInstances: [{ component: 'orders' }] })),
      {
        name: 'Orders API - Components',
        level: 'C3',
        componentInstances: [
          { ref: 'box', isContainer: true, component: 'orders' },
          { ref: 'x', component: 'orders', parent: 'box' },
          { ref: 'y', component: 'handler', parent: 'box' },
        ],
        relations: [{ fromComponentInstance: 'x', toComponentInstance: 'y', label: 'calls' }],
      },
    ],
  });
  t.is(made.status, 200, made.text);
  const dir = await mkdtemp(join(tmpdir(), 'c4store-titles-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const files: string[] = [];
  for (const [i, diagram] of (made.body.diagrams as Array<{ id: string }>).entries()) {
    const reply = await own.get(`/api/external/diagram/${diagram.id}`, { headers: { accept: 'text/vnd.mermaid' } });
    const file = join(dir, `d${i}.mmd`);
    await writeFile(file, reply.text);
    files.push(file);
  }
  const run = await mermaidParse(files);
  t.is(run.code, 0, run.stderr);
  t.deepEqual(
    run.parsed.slice(0, 3).map((p) => mermaidShown(p.title)),
    titles.slice(0, 3),
  );
  const missing = await plantumlMissing();
  if (missing) {
    t.log(`SKIPPED LOUDLY: ${missing}`);
    return;
  }
  const puml = join(dir, 'all.puml');
  await writeFile(puml, (await own.get('/api/external/model', { headers: { accept: 'text/x-plantuml' } })).text);
  const checked = await plantumlCheck([puml]);
  t.is(checked.code, 0, checked.stdout + checked.stderr);
  const nested = (await own.get(`/api/external/diagram/${made.body.diagrams.at(-1).id}`, { headers: { accept: 'text/x-plantuml' } })).text;
  t.is(nested.match(/\(c_[^,]+, "Orders API"/g)?.length, 1, nested);
});
