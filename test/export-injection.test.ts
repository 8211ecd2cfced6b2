import test from 'ava';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestServer } from './support/server.js';
import {
  likec4Model,
  likec4Validate,
  mermaidParse,
  mermaidShown,
  parseSvg,
  plantumlCheck,
  plantumlMissing,
  plantumlSvg,
} from './support/tools.js';

/**
 * Names written to carry an injection into the tool that reads an export, each read by that tool:
 * a Mermaid `%%{init}%%` directive (theme, CSS, a fetched URL), Structurizr's `${NAME}` (the
 * renderer's environment variables), the Unicode line separators PlantUML refuses, and the C0
 * controls XML forbids in the SVG drawing. Every tool must read each name back as plain text.
 */

const DIRECTIVE = `%%{init: {"theme":"dark","themeCSS":"svg{background:url(https://attacker.example/x.png)}"}}%%`;
// biome-ignore lint/suspicious/noTemplateCurlyInString: the text is the DSL's substitution syntax
const ENVIRONMENT = '${HOME} and ${PATH} and ${C4STORE_DOLLAR} and $${HOME} and ${C4STORE_DOLLAR_}';
const SEPARATORS = 'one\u2028two\u2029three\u0085four';
const CONTROLS = 'bell\u0007nul\u0000esc\u001b vt\u000b ff\u000c end\uffff';
/** C4-PlantUML's macros called from a name: PlantUML's preprocessor expands `Name(` anywhere in a line. */
const MACROS = 'Person(evil, Evil) Rel(a, b) System(x)';
const NAMES = [DIRECTIVE, ENVIRONMENT, SEPARATORS, CONTROLS, MACROS];

let server: TestServer;
let diagramId: string;

test.before(async () => {
  server = await TestServer.start();
  const reply = await server.post('/api/external/model', {
    components: NAMES.map((name, i) => ({ ref: `c${i}`, name, desc: `${name} (description)`, typeSlug: i === 0 ? 'person' : 'container' })),
    diagrams: [
      {
        name: `Injections ${DIRECTIVE}`,
        level: 'C2',
        componentInstances: NAMES.map((_, i) => ({ ref: `i${i}`, component: `c${i}` })),
        relations: [
          { fromComponentInstance: 'i0', toComponentInstance: 'i1', label: DIRECTIVE },
          { fromComponentInstance: 'i1', toComponentInstance: 'i2', label: ENVIRONMENT },
          { fromComponentInstance: 'i2', toComponentInstance: 'i3', label: SEPARATORS },
        ],
      },
    ],
  });
  if (reply.status !== 200) throw new Error(`model refused: ${reply.text}`);
  diagramId = reply.body.diagrams[0].id;
  // Tags carry names too: on every component and on the diagram.
  for (const [id, name] of [
    ['t1', `Tag "one" ${DIRECTIVE}`],
    ['t2', `a-b, c ${ENVIRONMENT}`],
    ['t3', SEPARATORS],
  ]) {
    const tag = await server.post('/api/external/tags', { id, name, color: 'red' });
    if (tag.status !== 201) throw new Error(`tag refused: ${tag.text}`);
  }
  for (const component of reply.body.components as Array<{ id: string }>) {
    const patched = await server.request('PATCH', `/api/external/components/${component.id}`, { body: { tags: ['t1', 't2', 't3'] } });
    if (patched.status !== 200) throw new Error(`tags refused: ${patched.text}`);
  }
  const tagged = await server.request('PATCH', `/api/external/diagrams/${diagramId}`, { body: { tags: ['t1', 't2', 't3'] } });
  if (tagged.status !== 200) throw new Error(`diagram tags refused: ${tagged.text}`);
});

test.after.always(() => server?.close());

async function exported(accept: string, path = `/api/external/diagram/${diagramId}`): Promise<string> {
  const reply = await server.get(path, { headers: { accept } });
  if (reply.status !== 200) throw new Error(`${path}: ${reply.status} ${reply.text}`);
  return reply.text;
}

/** What a tool shows for a name: line separators are line breaks, other controls blanks. */
const asShown = (name: string) => name.replace(/[\u0085\u2028\u2029]/g, '\n').replace(/[\u0000-\u0009\u000b-\u001f\u007f]/g, ' ');

test('SVG: C0 controls and U+FFFF become U+FFFD, so a real XML parser reads the drawing', async (t) => {
  const svg = await exported('image/svg+xml');
  // The parser has teeth: a raw control character is refused.
  t.not((await parseSvg('<svg xmlns="http://www.w3.org/2000/svg"><text>\u0007</text></svg>')).error, null);
  const parsed = await parseSvg(svg);
  t.is(parsed.error, null);
  t.is(parsed.root, 'svg');
  const texts = parsed.texts.join('\n');
  t.true(texts.includes('bell\ufffdnul\ufffdesc\ufffd'), texts);
  t.false(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\uffff]/.test(svg));
});

test("Mermaid: a %%{init}%% directive in a name or label is drawn as text, and Mermaid's configuration stays its own", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'c4store-mermaid-injection-'));
  const files = [join(dir, 'diagram.mmd'), join(dir, 'model.mmd')];
  await writeFile(files[0], await exported('text/vnd.mermaid'));
  await writeFile(files[1], await exported('text/vnd.mermaid', '/api/external/model'));
  t.false((await readFile(files[0], 'utf8')).includes('%%{'));
  // The check has teeth: the directive unescaped does change the theme in this same parser.
  const bare = join(dir, 'bare.mmd');
  await writeFile(bare, `C4Context\n  Person(a, "${DIRECTIVE}", "")\n`);
  const control = await mermaidParse([bare]);
  t.is(control.parsed[0].config.theme, 'dark');

  const run = await mermaidParse(files);
  t.is(run.code, 0, run.stderr);
  for (const parsed of run.parsed) {
    t.is(parsed.config.theme, 'default');
    t.is(parsed.config.themeCSS, '');
  }
  const [diagram] = run.parsed;
  const shown = diagram.shapes.map((s) => mermaidShown(s.label));
  for (const name of NAMES) t.true(shown.includes(asShown(name)), `${JSON.stringify(asShown(name))} in ${JSON.stringify(shown)}`);
  t.deepEqual(
    diagram.rels.map((r) => mermaidShown(r.label)),
    [DIRECTIVE, ENVIRONMENT, asShown(SEPARATORS)],
  );
});

/**
 * The DSL parser's substitution (StructurizrDslParser.substituteStrings): in each token, every
 * `${NAME}` (NAME of letters, digits, `-`, `_`, `.`) found in one pass over the token as it was is
 * replaced by the constant NAME, else by the environment variable NAME, else left.
 */
function dslSubstitute(token: string, constants: Map<string, string>, environment: Record<string, string>): string {
  let result = token;
  for (const [whole, name] of token.matchAll(/\$\{([a-zA-Z0-9\-_.]+?)\}/g)) {
    const value = constants.get(name) ?? environment[name];
    if (value !== undefined) result = result.replaceAll(whole, value);
  }
  return result;
}

// biome-ignore lint/suspicious/noTemplateCurlyInString: the title names the DSL's substitution syntax
test('Structurizr DSL: a "${NAME}" in any text survives the parser\'s substitution as written, whatever the environment', async (t) => {
  for (const path of [`/api/external/diagram/${diagramId}`, '/api/external/model']) {
    const dsl = await exported('text/vnd.structurizr.dsl', path);
    const constants = new Map(Array.from(dsl.matchAll(/^!const (\S+) "(.*)"$/gm), (m) => [m[1], m[2]] as [string, string]));
    // One constant, `$`, under a name no text holds (the texts hold C4STORE_DOLLAR and C4STORE_DOLLAR_).
    t.deepEqual([...constants], [['C4STORE_DOLLAR__', '$']]);
    t.true(dsl.indexOf('!const') < dsl.indexOf('workspace '), 'defined before any text');
    const environment = {
      HOME: '/home/renderer',
      PATH: '/usr/bin',
      C4STORE_DOLLAR: 'from the environment',
      C4STORE_DOLLAR_: 'from the environment',
    };
    const tokens = Array.from(dsl.matchAll(/"((?:[^"\\]|\\.)*)"/g), (m) => dslSubstitute(m[1], constants, environment));
    t.true(tokens.includes(`${ENVIRONMENT} (description)`), 'the description reads as written');
    t.true(
      tokens.some((token) => token.startsWith(ENVIRONMENT)),
      'the name reads as written',
    );
    t.false(
      tokens.some((token) => /\/home\/renderer|\/usr\/bin|from the environment/.test(token)),
      'no environment variable reaches the workspace',
    );
    t.false(/[\u0000-\u001f\u0085\u2028\u2029]/.test(dsl.replace(/\n/g, '')), 'one logical line per statement');
  }
});

test('PlantUML reads every export although names hold U+2028, U+2029, U+0085 and C0 controls, and draws the lines apart', async (t) => {
  const missing = await plantumlMissing();
  if (missing) {
    t.log(`SKIPPED LOUDLY: ${missing}`);
    t.pass();
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), 'c4store-plantuml-injection-'));
  const diagramFile = join(dir, 'diagram.puml');
  await writeFile(diagramFile, await exported('text/x-plantuml'));
  await writeFile(join(dir, 'model.puml'), await exported('text/x-plantuml', '/api/external/model'));
  // The check has teeth: PlantUML refuses a label holding U+2028 as it is.
  const bare = join(dir, 'bare', 'bare.puml');
  await mkdir(join(dir, 'bare'));
  await writeFile(bare, `@startuml\n!include <C4/C4_Component>\nPerson(a, "${SEPARATORS}", "")\n@enduml\n`);
  t.not((await plantumlCheck([bare])).code, 0);

  const run = await plantumlCheck([diagramFile, join(dir, 'model.puml')]);
  t.is(run.code, 0, run.stdout + run.stderr);
  t.is((await plantumlSvg([diagramFile])).code, 0);
  const svgFile = (await readdir(dir)).find((f) => f.endsWith('.svg')) as string;
  const drawn = Array.from((await readFile(join(dir, svgFile), 'utf8')).matchAll(/<text[^>]*>([^<]*)<\/text>/g), (m) => m[1]);
  for (const line of ['one', 'two', 'three', 'four'])
    t.true(drawn.includes(line), `${line} on a line of its own in ${JSON.stringify(drawn)}`);
});

test("PlantUML draws a name that calls C4-PlantUML's macros (Person(…), Rel(…)) as its text: no box made of it, no export refused", async (t) => {
  const missing = await plantumlMissing();
  if (missing) {
    t.log(`SKIPPED LOUDLY: ${missing}`);
    t.pass();
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), 'c4store-plantuml-macros-'));
  const diagramFile = join(dir, 'diagram.puml');
  await writeFile(diagramFile, await exported('text/x-plantuml'));
  await writeFile(join(dir, 'model.puml'), await exported('text/x-plantuml', '/api/external/model'));
  const run = await plantumlCheck([diagramFile, join(dir, 'model.puml')]);
  t.is(run.code, 0, run.stdout + run.stderr);
  // The check has teeth: the same name unescaped makes a second person of one.
  await mkdir(join(dir, 'bare'));
  const bare = join(dir, 'bare', 'bare.puml');
  await writeFile(bare, '@startuml\n!include <C4/C4_Component>\nContainer(c, "Person(evil, Evil)", "", "")\n@enduml\n');
  t.is((await plantumlSvg([bare])).code, 0);
  const bareDrawn = await drawnTexts(join(dir, 'bare'));
  t.true(
    bareDrawn.some((text) => text.includes('\u00abperson\u00bb')),
    JSON.stringify(bareDrawn),
  );

  t.is((await plantumlSvg([diagramFile])).code, 0);
  const drawn = await drawnTexts(dir);
  // NAMES[0] is the diagram's one person.
  t.is(drawn.filter((text) => text.includes('\u00abperson\u00bb')).length, 1, JSON.stringify(drawn));
  t.true(drawn.join(' ').includes(MACROS), JSON.stringify(drawn));
});

/** The texts of the SVG PlantUML drew in `dir`, each `<text>` element's, entities decoded. */
async function drawnTexts(dir: string): Promise<string[]> {
  const svgFile = (await readdir(dir)).find((f) => f.endsWith('.svg')) as string;
  const svg = await readFile(join(dir, svgFile), 'utf8');
  return Array.from(svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g), (m) =>
    m[1]
      .replace(/&#(\d+);/g, (_, code) => String.fromCodePoint(Number(code)))
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&'),
  );
}

test('LikeC4 reads every export of these names back as written', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'c4store-likec4-injection-'));
  const project = join(root, 'injections');
  await mkdir(project, { recursive: true });
  await writeFile(join(project, 'likec4.config.json'), JSON.stringify({ name: 'injections' }));
  await writeFile(join(project, 'model.c4'), await exported('text/vnd.likec4', '/api/external/model'));
  const run = await likec4Validate(root);
  t.is(run.code, 0, run.stdout + run.stderr);
  const model = await likec4Model(root, 'injections');
  const titles = Object.values(model.elements).map((e) => e.title);
  for (const name of NAMES) t.true(titles.includes(asShown(name)), `${JSON.stringify(asShown(name))} in ${JSON.stringify(titles)}`);
});
