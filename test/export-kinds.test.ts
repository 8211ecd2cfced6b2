/**
 * Each export draws an element as the drawing does (src/model/c4-kinds.ts, docs/api.md The
 * drawing): a person, a database cylinder or a queue pipe by the same rule on its type's slug,
 * and external elements (an `external…` slug, or a tag named External) in each tool's external
 * form. Every export is read by its real tool: PlantUML (Debian), Mermaid's parser, LikeC4.
 */
import test from 'ava';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { classify } from '../src/drawing/notation.js';
import { exportModel } from '../src/export/formats.js';
import type { ModelUnderConstruction } from '../src/model/files.js';
import type { ComponentInstance } from '../src/model/types.js';
import { diagram, instance, model } from './support/drawing-model.js';
import { likec4Validate, mermaidParse, plantumlCheck, plantumlMissing } from './support/tools.js';

/** Components by their type's slug: what the drawing calls each, and what it is in C4. */
const ELEMENTS: Array<{ id: string; slug: string; tagged?: boolean; parent?: string }> = [
  { id: 'shop', slug: 'software-system' },
  { id: 'api', slug: 'container', parent: 'shop' },
  { id: 'docs', slug: 'document-database', parent: 'shop' },
  { id: 'bus', slug: 'kafka-topic', parent: 'shop' },
  { id: 'legacy', slug: 'container', tagged: true, parent: 'shop' },
  { id: 'customer', slug: 'external-person' },
  { id: 'bank', slug: 'external-system' },
  { id: 'ledger', slug: 'external-database' },
];

function hostileModel(): { m: ModelUnderConstruction; c2: ReturnType<typeof diagram>; c1: ReturnType<typeof diagram> } {
  const m = model();
  for (const { id, slug, tagged } of ELEMENTS) {
    m.types.set(`t-${slug}`, { id: `t-${slug}`, slug, name: slug });
    m.components.set(id, {
      id,
      name: `The ${id}`,
      desc: null,
      state: 'ACTIVE',
      typeId: `t-${slug}`,
      linksTo: [],
      attributes: [],
      ...(tagged ? { tags: ['ext'] } : {}),
    });
  }
  const instances: ComponentInstance[] = ELEMENTS.map(({ id, parent }, k) =>
    instance(`i_${id}`, id, k * 20, 0, { isContainer: id === 'shop', parent: parent ? `i_${parent}` : null }),
  );
  const relation = (from: string, to: string) => ({
    id: `${from}-${to}`,
    fromComponentInstance: `i_${from}`,
    toComponentInstance: `i_${to}`,
    label: `${from} to ${to}`,
    desc: null,
    linksTo: [],
  });
  const relations = [
    relation('customer', 'api'),
    relation('api', 'docs'),
    relation('api', 'bus'),
    relation('api', 'legacy'),
    relation('api', 'bank'),
    relation('api', 'ledger'),
  ];
  const c2 = diagram({ id: 'c2', name: 'Shop containers', level: 'C2', componentInstances: instances, relations });
  const c1 = diagram({
    id: 'c1',
    name: 'Shop context',
    level: 'C1',
    componentInstances: instances.filter((i) => i.parent === null).map((i) => ({ ...i, isContainer: false })),
    relations: [relation('customer', 'shop'), relation('shop', 'bank'), relation('shop', 'ledger')],
  });
  m.diagrams.set('c2', c2);
  m.diagrams.set('c1', c1);
  return { m, c2, c1 };
}

test('the drawing and the exports read a type slug alike: what the drawing draws as a person, cylinder, pipe or external element, each export writes so', (t) => {
  const { m, c2 } = hostileModel();
  const tagNames = new Map([...m.tags.values()].map((tag) => [tag.id, tag.name]));
  const drawn = Object.fromEntries(c2.componentInstances.map((i) => [i.component!, classify(i, m, tagNames)]));
  t.like(drawn, { docs: 'database', bus: 'queue', legacy: 'external', customer: 'external-person', bank: 'external', ledger: 'external' });

  const puml = exportModel('plantuml', m, c2);
  for (const line of ['Person_Ext(c_customer,', 'ContainerDb(c_docs,', 'Container(c_bus,', 'System_Ext(c_bank,', 'ContainerDb(c_ledger,'])
    t.true(puml.includes(line), `${line} in\n${puml}`);
  // C4-PlantUML of older jars has no Container_Ext: the tags line says it.
  t.regex(puml, /ContainerDb\(c_ledger, "The ledger", "", "tags: external"\)/);
  t.regex(puml, /Container\(c_legacy, "The legacy", "", "tags: External"\)/);
  t.true(exportModel('plantuml', m, m.diagrams.get('c1')!).includes('SystemDb_Ext(c_ledger,'));

  const mmd = exportModel('mermaid', m, c2);
  for (const line of [
    'Person_Ext(c_customer,',
    'ContainerDb(c_docs,',
    'ContainerQueue(c_bus,',
    'Container_Ext(c_legacy,',
    'System_Ext(c_bank,',
    'ContainerDb_Ext(c_ledger,',
  ])
    t.true(mmd.includes(line), `${line} in\n${mmd}`);

  const c4 = exportModel('likec4', m, c2);
  for (const line of ['c_customer = person', 'c_docs = database', 'c_bus = queue', 'c_bank = system', 'c_ledger = database'])
    t.true(c4.includes(line), `${line} in\n${c4}`);
  t.regex(c4, /c_customer = person 'The customer' \{\n\s+#external\n/);
  t.regex(c4, /c_legacy = container 'The legacy' \{\n\s+#t_External\n/);

  const dsl = exportModel('structurizr', m, c2);
  t.regex(dsl, /c_customer = person "The customer" "" "external-person,External"/);
  t.regex(dsl, /c_docs = container "The docs" "" "" "document-database,Database"/);
  t.regex(dsl, /c_bus = container "The bus" "" "" "kafka-topic,Queue"/);
  t.regex(dsl, /c_ledger = softwareSystem "The ledger" "" "external-database,Database,External"/);
  t.regex(dsl, /element "External" \{\n\s+background #6b6b6b/);
  // Tagged `external`, not `External`: the style's tag is added beside it (tagList drops only exact repeats).
  m.tags.set('lower', { id: 'lower', name: 'external', desc: null, color: 'grey' } as never);
  m.components.get('legacy')!.tags = ['lower'];
  t.regex(exportModel('structurizr', m, c2), /c_legacy = container "The legacy" "" "" "container,External,external"/);
});

test('PlantUML, Mermaid and LikeC4 read every one of these exports: the model and each diagram', async (t) => {
  const { m, c1, c2 } = hostileModel();
  const root = await mkdtemp(join(tmpdir(), 'c4store-kinds-'));
  const missing = await plantumlMissing();
  const sources = { model: undefined, c1, c2 };
  const puml: string[] = [];
  const mmd: string[] = [];
  for (const [name, d] of Object.entries(sources)) {
    const dir = join(root, 'likec4', name);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'likec4.config.json'), JSON.stringify({ name }));
    await writeFile(join(dir, 'model.c4'), exportModel('likec4', m, d));
    puml.push(join(root, `${name}.puml`));
    await writeFile(puml.at(-1)!, exportModel('plantuml', m, d));
    mmd.push(join(root, `${name}.mmd`));
    await writeFile(mmd.at(-1)!, exportModel('mermaid', m, d));
  }
  const likec4 = await likec4Validate(join(root, 'likec4'));
  t.is(likec4.code, 0, likec4.stdout + likec4.stderr);
  const parsed = await mermaidParse(mmd);
  t.is(parsed.code, 0, parsed.stderr);
  const types = Object.fromEntries(parsed.parsed[2]!.shapes.map((s) => [s.alias, s.type]));
  t.like(types, {
    c_customer: 'external_person',
    c_docs: 'container_db',
    c_bus: 'container_queue',
    c_legacy: 'external_container',
    c_bank: 'external_system',
    c_ledger: 'external_container_db',
  });
  if (missing) {
    t.log(`SKIPPED LOUDLY: ${missing}`);
    return;
  }
  const run = await plantumlCheck(puml);
  t.is(run.code, 0, run.stdout + run.stderr);
});
