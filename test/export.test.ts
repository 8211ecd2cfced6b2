import test from 'ava';
import { mkdir, mkdtemp, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { plantumlText } from '../src/export/plantuml.js';
import { structurizrText } from '../src/export/structurizr.js';
import { cli } from './support/process.js';
import { TestServer } from './support/server.js';
import {
  likec4Model,
  likec4Validate,
  mermaidParse,
  mermaidShown,
  plantumlCheck,
  plantumlMissing,
  plantumlSvg,
  tool,
} from './support/tools.js';

/**
 * Every export of the sample model, and of a model of hostile names, is loaded by the format's
 * own tool: LikeC4's CLI and Mermaid's parser (npm), PlantUML (Debian). No maintained parser of
 * the Structurizr DSL installs from npm or Debian (its parser is Java, on Maven Central), so the
 * Structurizr export is checked here against the DSL's tokenizing rules only.
 */

const SAMPLE = join(import.meta.dirname, '..', 'sample-repo');
const TYPES = {
  plantuml: 'text/x-plantuml',
  mermaid: 'text/vnd.mermaid',
  likec4: 'text/vnd.likec4',
  structurizr: 'text/vnd.structurizr.dsl',
} as const;
const EXTENSION = { plantuml: 'puml', mermaid: 'mmd', likec4: 'c4', structurizr: 'dsl' } as const;
type Format = keyof typeof TYPES;

let sample: TestServer;
let hostile: TestServer;
let diagramIds: string[];

const HOSTILE_NAMES = [
  'Ada "the \'quoted\'" Lovelace',
  'Back\\slash \\n and \\" end\\',
  'Two\nlines',
  '%date() $var !include <b>bold</b> **strong** //it// --strike-- ~tilde',
  '#quot; #35; { } [[link]] @enduml',
];

test.before(async () => {
  sample = await TestServer.start({ slug: 'demo', from: SAMPLE });
  diagramIds = (await sample.get('/api/external/diagram')).body.map((d: { id: string }) => d.id);
  hostile = await TestServer.start();
  const types = (await hostile.get('/api/external/type')).body as Array<{ id: string; slug: string }>;
  const typeSlugs = ['person', 'container', 'database', 'queue', 'software-system'];
  const reply = await hostile.post('/api/external/model', {
    components: HOSTILE_NAMES.map((name, i) => ({
      ref: `c${i}`,
      name,
      desc: `${name}\ndesc`,
      typeSlug: types.find((t) => t.slug === typeSlugs[i])?.slug,
    })),
    diagrams: [
      {
        name: 'Hostile "diagram"\nwith %date()',
        level: 'C2',
        componentInstances: [
          { ref: 'box', isContainer: true, component: 'c4' },
          ...HOSTILE_NAMES.slice(0, 4).map((_, i) => ({ ref: `i${i}`, component: `c${i}`, parent: i > 1 ? 'box' : undefined })),
          { ref: 'ph', placeholder: 'Placeholder "x"\n}' },
        ],
        relations: [
          { fromComponentInstance: 'i0', toComponentInstance: 'i1', label: 'calls "it"\n%date() \\' },
          { fromComponentInstance: 'i1', toComponentInstance: 'i2', label: '<script>x</script>', desc: 'over\ntwo lines' },
          { fromComponentInstance: 'i2', toComponentInstance: 'ph', label: "it's" },
        ],
      },
    ],
  });
  if (reply.status !== 200) throw new Error(`hostile model refused: ${reply.text}`);
});

test.after.always(async () => {
  await sample?.close();
  await hostile?.close();
});

async function exportsOf(server: TestServer, format: Format, dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const files: string[] = [];
  const ids = (await server.get('/api/external/diagram')).body.map((d: { id: string }) => d.id);
  for (const [name, path] of [['model', '/api/external/model'], ...ids.map((id: string) => [id, `/api/external/diagram/${id}`])]) {
    const reply = await server.get(path, { headers: { accept: TYPES[format] } });
    if (reply.status !== 200) throw new Error(`${path}: ${reply.status} ${reply.text}`);
    if (!reply.headers.get('content-type')?.startsWith(TYPES[format])) throw new Error(`${path}: ${reply.headers.get('content-type')}`);
    const file = join(dir, `${name}.${EXTENSION[format]}`);
    await writeFile(file, reply.text);
    files.push(file);
  }
  return files;
}

test('JSON stays the answer to no Accept and to */*; each export type is served with its media type and ETag', async (t) => {
  for (const accept of [undefined, '*/*', 'application/json, text/vnd.mermaid;q=0.5']) {
    const reply = await sample.get('/api/external/model', { headers: accept ? { accept } : {} });
    t.regex(reply.headers.get('content-type') ?? '', /^application\/json/);
  }
  for (const format of Object.keys(TYPES) as Format[]) {
    const reply = await sample.get(`/api/external/diagram/${diagramIds[0]}`, { headers: { accept: TYPES[format] } });
    t.is(reply.status, 200);
    t.is(reply.headers.get('content-type'), `${TYPES[format]}; charset=utf-8`);
    t.is(reply.headers.get('etag'), `"${await sample.head()}"`);
    t.regex(reply.headers.get('vary') ?? '', /Accept/);
    const again = await sample.get(`/api/external/diagram/${diagramIds[0]}`, {
      headers: { accept: TYPES[format], 'if-none-match': reply.headers.get('etag') as string },
    });
    t.is(again.status, 304);
    // The current form's path, by id or ref, exports the same (it answered JSON).
    const ref = (await sample.get(`/api/external/diagram/${diagramIds[0]}`)).body.ref as string;
    for (const name of [diagramIds[0], ref]) {
      const current = await sample.get(`/api/external/diagrams/${name}`, { headers: { accept: TYPES[format] } });
      t.is(current.headers.get('content-type'), `${TYPES[format]}; charset=utf-8`, `${format} ${name}`);
      t.is(current.text, reply.text);
    }
  }
  // Parameters of a media range other than its weight change nothing (negotiation matched them exactly).
  for (const accept of [
    `${TYPES.plantuml}; charset=utf-8`,
    `${TYPES.mermaid};charset=UTF-8;q=0.9, application/json;q=0.1`,
    'image/svg+xml; charset=utf-8',
  ]) {
    const reply = await sample.get(`/api/external/diagram/${diagramIds[0]}`, { headers: { accept } });
    t.is(reply.headers.get('content-type')?.split(';')[0], accept.split(';')[0], accept);
  }
  const yaml = await sample.get('/api/external/tag', { headers: { accept: 'application/yaml; charset=utf-8' } });
  t.regex(yaml.headers.get('content-type') ?? '', /^application\/yaml/);
  const missing = await sample.get('/api/external/diagram/01j0000000000000000000000a', { headers: { accept: TYPES.mermaid } });
  t.is(missing.status, 404);
  t.deepEqual(missing.body, { error: "Diagram with id '01j0000000000000000000000a' does not exist." });
  const noKey = await sample.get('/api/external/model', { key: null, headers: { accept: TYPES.plantuml } });
  t.is(noKey.status, 401);
});

/** One LikeC4 workspace of one project per exported file (LikeC4 reads every .c4 file of a project as one model). */
async function likec4Workspace(root: string, projects: Record<string, string>): Promise<void> {
  for (const [name, file] of Object.entries(projects)) {
    const dir = join(root, name);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'likec4.config.json'), JSON.stringify({ name }));
    await writeFile(join(dir, 'model.c4'), await readFile(file));
  }
}

test('LikeC4 validates every export (sample model, each diagram, hostile names) and reads names back exactly', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'c4store-likec4-'));
  const files = await exportsOf(sample, 'likec4', join(root, 'exports'));
  const [hostileModel] = await exportsOf(hostile, 'likec4', join(root, 'hostile-exports'));
  const workspace = join(root, 'workspace');
  await likec4Workspace(workspace, {
    ...Object.fromEntries(files.map((file, i) => [i === 0 ? 'sample' : `diagram-${i}`, file])),
    hostile: hostileModel,
  });
  // One run over every project: a failure in any fails it (checked below with a broken copy).
  const run = await likec4Validate(workspace);
  t.is(run.code, 0, run.stdout + run.stderr);

  const model = await likec4Model(workspace, 'sample');
  const components = (await sample.get('/api/external/component')).body as Array<{ name: string }>;
  const titles = Object.values(model.elements).map((e) => e.title);
  for (const { name } of components) t.true(titles.includes(name), name);
  t.true(titles.includes('CheckoutController'), 'placeholders of diagrams are elements too');
  for (const key of ['v_index', ...diagramIds.map((id) => `v_${id}`)]) t.true(key in model.views, key);

  const hostileRead = await likec4Model(workspace, 'hostile');
  const hostileTitles = Object.values(hostileRead.elements).map((e) => e.title);
  for (const name of HOSTILE_NAMES) t.true(hostileTitles.includes(name), JSON.stringify(name));
  t.true(hostileTitles.includes('Placeholder "x"\n}'));
  t.true(Object.values(hostileRead.elements).some((e) => e.description?.txt === `${HOSTILE_NAMES[1]}\ndesc`));
  t.true(Object.values(hostileRead.relations).some((r) => r.title === 'calls "it"\n%date() \\'));

  const broken = join(root, 'broken');
  await likec4Workspace(broken, { broken: hostileModel });
  await writeFile(join(broken, 'broken', 'model.c4'), (await readFile(hostileModel, 'utf8')).replace(/ -> /, ' -> nowhere_'));
  t.not((await likec4Validate(broken)).code, 0, 'likec4 validate fails on a broken export');
});

test("Mermaid's own parser accepts the sample exports and reads hostile names back as drawn", async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'c4store-mermaid-'));
  const files = await exportsOf(sample, 'mermaid', join(root, 'sample'));
  const sampleRun = await mermaidParse(files);
  t.is(sampleRun.code, 0, sampleRun.stderr);
  t.true(sampleRun.parsed.every((p) => p.diagramType === 'c4' && p.shapes.length > 0));
  // The whole model holds every diagram, each a boundary of its own, and every component.
  const components = (await sample.get('/api/external/component')).body as Array<{ name: string }>;
  const model = sampleRun.parsed[0];
  for (const [i, id] of diagramIds.entries())
    t.true(
      model.boundaries.some((b) => b.alias === `d${i + 1}_v_${id}`),
      id,
    );
  const modelShapes = new Set(model.shapes.map((s) => mermaidShown(s.label)));
  for (const { name } of components) t.true(modelShapes.has(name), name);
  for (const [i, diagram] of sampleRun.parsed.slice(1).entries()) {
    const own = model.shapes.filter((s) => s.alias.startsWith(`d${i + 1}_`)).map((s) => s.alias.slice(`d${i + 1}_`.length));
    t.deepEqual(own.sort(), diagram.shapes.map((s) => s.alias).sort(), 'each diagram in the model as exported alone');
  }

  const hostileFiles = await exportsOf(hostile, 'mermaid', join(root, 'hostile'));
  const run = await mermaidParse(hostileFiles);
  t.is(run.code, 0, run.stderr);
  const diagram = run.parsed[1];
  const shown = diagram.shapes.map((s) => mermaidShown(s.label));
  for (const name of HOSTILE_NAMES.slice(0, 4)) t.true(shown.includes(name), `${JSON.stringify(name)} in ${JSON.stringify(shown)}`);
  t.true(diagram.boundaries.some((b) => mermaidShown(b.label) === HOSTILE_NAMES[4]));
  t.deepEqual(
    diagram.rels.map((r) => mermaidShown(r.label)),
    ['calls "it"\n%date() \\', '<script>x</script>', "it's"],
  );
});

test('Mermaid: a container box with nothing in it, and a diagram without boxes, still parse (Mermaid has no empty boundary)', async (t) => {
  const server = await TestServer.start();
  t.teardown(() => server.close());
  const reply = await server.post('/api/external/model', {
    components: [
      { ref: 's', name: 'Sys', typeSlug: 'software-system' },
      { ref: 'u', name: 'User', typeSlug: 'person' },
    ],
    diagrams: [
      {
        name: 'Empty box',
        level: 'C1',
        componentInstances: [
          { ref: 'b', isContainer: true, component: 's' },
          { ref: 'x', component: 'u' },
        ],
        relations: [{ fromComponentInstance: 'x', toComponentInstance: 'b', label: 'uses' }],
      },
      { name: 'Nothing yet', level: 'C2' },
    ],
  });
  t.is(reply.status, 200, reply.text);
  const files = await exportsOf(server, 'mermaid', await mkdtemp(join(tmpdir(), 'c4store-mermaid-empty-')));
  const run = await mermaidParse(files);
  t.is(run.code, 0, run.stderr);
  const [model, emptyBox] = run.parsed;
  t.deepEqual(emptyBox!.boundaries, []);
  t.deepEqual(emptyBox!.shapes.map((s) => mermaidShown(s.label)).sort(), ['Sys', 'User']);
  t.deepEqual(
    emptyBox!.rels.map((r) => mermaidShown(r.label)),
    ['uses'],
    'the box drawn as its element keeps its relation',
  );
  t.is(model!.boundaries.length, 1, 'the diagram without boxes is left out of the model');
});

test('PlantUML (Debian) checks the sample exports with C4-PlantUML from its own jar, and draws hostile names as they are', async (t) => {
  const missing = await plantumlMissing();
  if (missing) {
    t.log(`SKIPPED LOUDLY: ${missing}`);
    t.pass();
    return;
  }
  const root = await mkdtemp(join(tmpdir(), 'c4store-plantuml-'));
  const files = await exportsOf(sample, 'plantuml', join(root, 'sample'));
  const hostileFiles = await exportsOf(hostile, 'plantuml', join(root, 'hostile'));
  // One Java start for both (each takes seconds on a busy machine).
  const run = await plantumlCheck([...files, ...hostileFiles]);
  t.is(run.code, 0, run.stdout + run.stderr);
  // The check really checks: a broken copy fails it.
  const broken = join(root, 'broken.puml');
  await writeFile(broken, (await readFile(files[1], 'utf8')).replace(/Rel\(/, 'Rel(('));
  t.not((await plantumlCheck([broken])).code, 0);

  t.is((await plantumlSvg([hostileFiles[1]])).code, 0);
  // `@startuml <name>` names the drawing: the only SVG in the folder.
  const svgFile = (await readdir(join(root, 'hostile'))).find((f) => f.endsWith('.svg')) as string;
  const svg = await readFile(join(root, 'hostile', svgFile), 'utf8');
  const drawn = Array.from(svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g), (m) =>
    m[1]
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&#39;|&apos;/g, "'")
      .replace(/&amp;/g, '&'),
  ).join('\n');
  const squeezed = drawn.replace(/\s+/g, '');
  for (const piece of [
    'Ada "the \'quoted\'" Lovelace',
    'Back\\slash \\n and \\" end\\',
    'Two',
    'lines',
    '%date() $var !include <b>bold</b> **strong** //it// --strike-- ~tilde',
    'calls "it"',
    '<script>x</script>',
  ]) {
    t.true(squeezed.includes(piece.replace(/\s+/g, '')), `${JSON.stringify(piece)} not drawn in:\n${drawn}`);
  }
  t.false(/\b20\d\d\b/.test(drawn), '%date() was not evaluated');
  // A description over two lines is drawn in italics on each, no markup left over (it drew `}</i>`).
  t.true(squeezed.includes('overtwolines'), drawn);
  t.false(drawn.includes('</i>'), drawn);
});

test('Structurizr DSL: a workspace with model and views; every string a single DSL token', async (t) => {
  const reply = await sample.get('/api/external/model', { headers: { accept: TYPES.structurizr } });
  const lines = reply.text.split('\n');
  t.regex(lines[0], /^!const C4STORE_DOLLAR_* "\$"$/);
  t.is(lines[2], 'workspace "Northwind Traders" "" {');
  t.true(lines.includes('    model {'));
  t.true(lines.includes('    views {'));
  t.is(lines.filter((l) => /^ {8}(systemLandscape|systemContext|container|component) .*\{$/.test(l)).length, 1 + diagramIds.length);
  // Outside quoted tokens, braces balance, an opening brace ends its line and a closing one stands alone, as the DSL requires.
  const bare = lines.map((l) => l.replace(/"(?:[^"\\]|\\.)*"/g, '""'));
  t.false(
    bare.some((l) => l.includes('"') && l.split('"').length % 2 === 0),
    'every quote closed on its line',
  );
  t.is(bare.join('').split('{').length, bare.join('').split('}').length);
  t.true(bare.filter((l) => l.includes('}')).every((l) => l.trim() === '}'));
  t.true(bare.filter((l) => l.includes('{')).every((l) => l.trimEnd().endsWith('{')));

  for (const name of HOSTILE_NAMES) {
    const token = structurizrText(name);
    t.false(token.includes('\n'), 'one line');
    // The DSL tokenizer's rule: inside quotes, \" is a quote; the token ends at the first bare quote.
    const body = token.slice(1, -1);
    t.false(/(^|[^\\])(\\\\)*"/.test(body), `${token}: no bare quote inside`);
  }
  const hostileDsl = (await hostile.get('/api/external/model', { headers: { accept: TYPES.structurizr } })).text;
  for (const name of HOSTILE_NAMES) t.true(hostileDsl.includes(structurizrText(name)));
});

test('c4store export writes each format of the model and of one diagram to standard output', async (t) => {
  for (const format of Object.keys(TYPES) as Format[]) {
    const output = await cli('export', 'demo', '--format', format, '--data', sample.dataDir);
    t.is(output, (await sample.get('/api/external/model', { headers: { accept: TYPES[format] } })).text);
  }
  const one = await cli('export', 'demo', '--format', 'mermaid', '--diagram', diagramIds[1], '--data', sample.dataDir);
  t.is(one, (await sample.get(`/api/external/diagram/${diagramIds[1]}`, { headers: { accept: TYPES.mermaid } })).text);
  t.true(plantumlText('a "b" %c').includes('<U+0022>'));
  // --diagram takes a ref as well as an id.
  const diagram = (await sample.get(`/api/external/diagram/${diagramIds[1]}`)).body as { ref?: string };
  t.truthy(diagram.ref);
  t.is(await cli('export', 'demo', '--format', 'mermaid', '--diagram', diagram.ref as string, '--data', sample.dataDir), one);
  await t.throwsAsync(cli('export', 'demo', '--format', 'mermaid', '--diagram', 'no-such-ref', '--data', sample.dataDir), {
    message: /Diagram with id 'no-such-ref' does not exist\./,
  });
});

test("README's LikeC4 line runs as printed, in the folder `npm start` ran in (likec4 validate standing in for the dev server)", async (t) => {
  const readme = await readFile(join(import.meta.dirname, '..', 'README.md'), 'utf8');
  const line = readme.split('\n').find((l) => l.includes('--format likec4 >')) as string;
  t.regex(line, /&& npx likec4 start model$/);
  const cwd = await mkdtemp(join(tmpdir(), 'c4store-readme-likec4-'));
  const root = join(import.meta.dirname, '..');
  await symlink(sample.dataDir, join(cwd, 'data'));
  await symlink(join(root, 'dist'), join(cwd, 'dist'));
  await symlink(join(root, 'node_modules'), join(cwd, 'node_modules'));
  const run = await tool('sh', ['-c', line.replace(/npx likec4 start model$/, 'npx likec4 validate --no-layout model')], { cwd });
  t.is(run.code, 0, run.stdout + run.stderr);
  t.regex(await readFile(join(cwd, 'model', 'model.c4'), 'utf8'), /^specification \{/);
});
