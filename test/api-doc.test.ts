import test from 'ava';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { parse as parseYaml } from 'yaml';
import { Receiver, type Received } from './support/events.js';
import { cli, lastLine, serveProcess } from './support/process.js';
import { run } from './support/server.js';

/**
 * docs/api.md's examples, taken from the document itself and run as a reader would, with curl,
 * against a fresh `serve --demo` beside the scratch organization `acme` the document's examples
 * were made on (`org create acme --member ada@example.com`, a reader key): sections 1 to 5 (the
 * API's forms, the create/update rules, every endpoint, diagrams, errors) and the ignored-fields
 * example. What a user would be misled by is checked: the status line, the headers the document
 * shows (`Content-Type`, `Allow`, `WWW-Authenticate`, `C4store-Error-Context`,
 * `C4store-Ignored-Fields`; `ETag` and `Link` present), an `error` text exactly, and the field
 * names of every object of a JSON or YAML answer. Ids, commits and times differ from run to run:
 * the document's ids and commits are mapped to this run's as the answers show them (a field of
 * the document's answer against the same field of the real one), and values other than errors
 * are not compared (the document shows layout as one run laid it out).
 *
 * The examples build on each other as the document's run did, which is not the document's order
 * (§1 shows ETags of writes made in §3): a write is run in the order of the `apiContext` time its
 * shown answer carries, a read whose shown `ETag` is a write's right after that write, and the
 * rest afterwards in the document's order. Sections 13, 17 and 19 are run by plans (below).
 */

const DOC = join(import.meta.dirname, '..', 'docs', 'api.md');
const ID = /\b[0-9a-hjkmnp-tv-z]{26}\b/g;
const COMMIT = /\b[0-9a-f]{40}\b/g;
const COMPARED_HEADERS = [
  'content-type',
  'allow',
  'www-authenticate',
  'c4store-error-context',
  'c4store-ignored-fields',
  'location',
  'retry-after',
];

interface Block {
  lang: string;
  line: number;
  body: string[];
  /** The prose between this block and the one before. */
  before: string;
}

function blocksOf(text: string, firstLine = 1): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  let prose: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^( *)```(\w*)\s*$/.exec(lines[i]);
    if (!fence) {
      prose.push(lines[i]);
      continue;
    }
    const indent = fence[1].length;
    const body: string[] = [];
    const line = firstLine + i;
    for (i++; !/^ *```\s*$/.test(lines[i]); i++) body.push(lines[i].slice(indent));
    blocks.push({ lang: fence[2], line, body, before: prose.join('\n') });
    prose = [];
  }
  return blocks;
}

interface Answer {
  status: string;
  headers: Record<string, string>;
  body: string;
}

function parseAnswer(text: string): Answer | undefined {
  const lines = text.split(/\r?\n/);
  let i = lines.findIndex((line) => /^HTTP\/\S+ \d{3}/.test(line));
  if (i < 0) return undefined;
  const status = lines[i].trim();
  const headers: Record<string, string> = {};
  for (i++; i < lines.length && lines[i].trim() !== ''; i++) {
    const colon = lines[i].indexOf(':');
    headers[lines[i].slice(0, colon).toLowerCase()] = lines[i].slice(colon + 1).trim();
  }
  return {
    status,
    headers,
    body: lines
      .slice(i + 1)
      .join('\n')
      .trim(),
  };
}

interface Example {
  block: Block;
  command: string;
  expected?: Partial<Answer> & { code?: string; learnId?: string };
  /** What the example's run must follow: a time, or after all of them. */
  order: number;
}

/** The curl commands of a shell block, each with the `# …` lines that follow it. */
function commandsOf(block: Block): Array<{ command: string; comments: string[] }> {
  const commands: Array<{ command: string; comments: string[] }> = [];
  let quotes = 0;
  for (const line of block.body) {
    const current = commands.at(-1);
    if (quotes % 2 === 0 && /^curl\b/.test(line)) commands.push({ command: line, comments: [] });
    else if (quotes % 2 === 0 && line.startsWith('#')) current?.comments.push(line.replace(/^# ?/, ''));
    else if (current && current.comments.length === 0) current.command += `\n${line}`;
    else continue;
    quotes += (line.match(/'/g) ?? []).length;
  }
  return commands;
}

function fromComments(comments: string[]): Example['expected'] {
  const expected: NonNullable<Example['expected']> = { headers: {} };
  for (const comment of comments) {
    const arrow = /^→ (\d{3})(?:, id (\w{26}))?/.exec(comment);
    if (arrow) [, expected.code, expected.learnId] = arrow;
    else if (/^HTTP\//.test(comment)) expected.status = comment;
    else if (/^\{/.test(comment)) expected.body = comment;
    else if (/^[A-Z][\w-]+: /.test(comment)) {
      const colon = comment.indexOf(':');
      expected.headers![comment.slice(0, colon).toLowerCase()] = comment.slice(colon + 1).trim();
    }
  }
  return expected;
}

function shownTime(text: string): number | undefined {
  const times = [...text.matchAll(/apiContext"?: "(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)"/g)].map((m) => Date.parse(`${m[1]}Z`));
  return times.length ? Math.max(...times) : undefined;
}

function examplesOf(doc: string): Example[] {
  const start = doc.indexOf('\n## 1. Overview');
  const end = doc.indexOf('\n## 6. Choices made where the contract is silent');
  const ignored = doc.indexOf('\n### Ignored fields');
  const lineOf = (offset: number) => doc.slice(0, offset).split('\n').length;
  const sections = [
    [start, end],
    [ignored, doc.indexOf('\n## ', ignored + 1)],
  ];
  const examples: Example[] = [];
  for (const [from, to] of sections) {
    const blocks = blocksOf(doc.slice(from, to), lineOf(from));
    blocks.forEach((block, b) => {
      if (block.lang !== 'sh') return;
      const next = blocks[b + 1];
      const shown = next && ['http', 'text', ''].includes(next.lang) ? parseAnswer(next.body.join('\n')) : undefined;
      const commands = commandsOf(block);
      commands.forEach(({ command, comments }, i) => {
        const expected = comments.length > 0 ? fromComments(comments) : i === commands.length - 1 ? shown : undefined;
        examples.push({ block, command, expected, order: Number.POSITIVE_INFINITY });
      });
    });
  }
  // Writes in the order of the times their answers show; reads that show a write's ETag right after it.
  const etagTime = new Map<string, number>();
  for (const example of examples) {
    const time = shownTime(example.expected?.body ?? '');
    const isWrite = /-X (POST|PUT)\b/.test(example.command);
    if (time !== undefined && isWrite) {
      example.order = time;
      const etag = example.expected?.headers?.etag;
      if (etag) etagTime.set(etag, time);
    }
  }
  // The commands of one block go together, as the document ran them.
  for (const example of examples) {
    const timed = examples.find((other) => other.block === example.block && other.order !== Number.POSITIVE_INFINITY);
    if (timed) example.order = timed.order;
  }
  for (const example of examples) {
    const etag = example.expected?.headers?.etag;
    if (example.order === Number.POSITIVE_INFINITY && etag && etagTime.has(etag)) example.order = etagTime.get(etag)! + 0.5;
  }
  return examples
    .map((example, i) => ({ example, i }))
    .sort((a, b) => a.example.order - b.example.order || a.i - b.i)
    .map(({ example }) => example);
}

/** The document's ids and commits, as this run made them. */
class Names {
  readonly map = new Map<string, string>();
  /** Names the document shortened (`2791c1f…`), each as this run's. */
  private readonly aliases = new Map<string, string>();
  alias(shown: string, real: string): void {
    this.aliases.set(shown, real);
  }
  of(text: string): string {
    for (const [shown, real] of this.aliases) text = text.replaceAll(shown, real);
    return text.replace(ID, (id) => this.map.get(id) ?? id).replace(COMMIT, (id) => this.map.get(id) ?? id);
  }
  learn(shown: unknown, real: unknown): void {
    if (typeof shown === 'string' && typeof real === 'string') {
      if ((new RegExp(`^${ID.source}$`).test(shown) || /^[0-9a-f]{40}$/.test(shown)) && !this.map.has(shown)) this.map.set(shown, real);
    } else if (Array.isArray(shown) && Array.isArray(real))
      shown.forEach((s, i) => {
        this.learn(s, real[i]);
      });
    else if (isObject(shown) && isObject(real)) for (const key of Object.keys(shown)) this.learn(shown[key], real[key]);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parsed(text: string, yaml: boolean): { value: unknown } | undefined {
  if (text === '' || text.includes('…')) return undefined;
  try {
    return { value: JSON.parse(text) };
  } catch {
    if (!yaml) return undefined;
    try {
      return { value: parseYaml(text) };
    } catch {
      return undefined;
    }
  }
}

/**
 * How a shown answer is held to the real one: `abridged` (the document left parts out with `…`):
 * the fields shown are there, in that order; else every object has exactly the fields shown, and
 * with `lengths` every array as many items as shown.
 */
interface Strictness {
  abridged?: boolean;
  lengths?: boolean;
}

/** Where the field names of `shown` and `real` differ, object by object. */
function fieldDifferences(shown: unknown, real: unknown, path: string, out: string[], strictness: Strictness = {}): void {
  if (Array.isArray(shown)) {
    if (!Array.isArray(real)) out.push(`${path}: the document shows an array, the server answered ${JSON.stringify(real)}`);
    else {
      if (strictness.lengths && !strictness.abridged && shown.length !== real.length)
        out.push(
          `${path}: the document shows ${shown.length} items; the server answers ${real.length}: ${JSON.stringify(real).slice(0, 300)}`,
        );
      shown.forEach((item, i) => {
        if (i < real.length) fieldDifferences(item, real[i], `${path}.${i}`, out, strictness);
      });
    }
  } else if (isObject(shown)) {
    if (!isObject(real)) out.push(`${path}: the document shows an object, the server answered ${JSON.stringify(real)}`);
    else {
      const keys = Object.keys(real);
      const fits = strictness.abridged
        ? Object.keys(shown).every((key, i, all) => keys.includes(key) && (i === 0 || keys.indexOf(all[i - 1]) < keys.indexOf(key)))
        : Object.keys(shown).join() === keys.join();
      if (!fits) out.push(`${path}: the document shows fields ${Object.keys(shown).join(', ')}; the server answers ${keys.join(', ')}`);
      for (const key of Object.keys(shown)) fieldDifferences(shown[key], real[key], `${path}.${key}`, out, strictness);
    }
  }
}

test("docs/api.md's examples of sections 1-5 answer as the document shows", async (t) => {
  const doc = await readFile(DOC, 'utf8');
  const examples = examplesOf(doc);
  t.true(examples.length >= 40, `the document has its examples (${examples.length} found)`);

  const home = await mkdtemp(join(tmpdir(), 'c4store-api-doc-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  const data = join(home, 'data');
  await mkdir(data);
  const server = await serveProcess(data, '--demo');
  t.teardown(() => server.stop());
  const demoKey = server.output.find((line) => /^c4s_[A-Za-z0-9_-]{43}$/.test(line))!;
  const key = lastLine(await cli('org', 'create', 'acme', '--member', 'ada@example.com', '--data', data));
  const readerKey = lastLine(await cli('key', 'create', 'acme', '--label', 'ci-reader', '--role', 'reader', '--data', data));
  // §1.8's body of 11,330,001 bytes.
  await writeFile(join(home, 'big.json'), Buffer.alloc(11_330_001, ' '));
  const host = new URL(server.url).host;
  const names = new Names();

  const curl = async (command: string, demo: boolean): Promise<string> => {
    const script = names.of(command.replace(/^curl /, 'curl -sS -i ').replaceAll('localhost:8080', host));
    const env = { ...process.env, KEY: demo ? demoKey : key, READER_KEY: readerKey, BASE: server.url, API: `${server.url}/api/external` };
    const { stdout } = await run('bash', ['-c', script], { cwd: home, env, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  };

  let checked = 0;
  const mismatches: string[] = [];
  const is = (actual: unknown, shown: unknown, what: string) => {
    if (actual !== shown)
      mismatches.push(`${what}: the document shows ${JSON.stringify(shown)}, the server answered ${JSON.stringify(actual)}`);
  };
  for (const { block, command, expected } of examples) {
    const where = `docs/api.md line ${block.line}: ${command.split('\n')[0]}`;
    // A `*.yaml` file the prose names ("… (`model.yaml`)") is the YAML block just before.
    const file = /--data-binary @(\S+\.yaml)/.exec(command)?.[1];
    if (file) {
      const blocks = blocksOf(doc);
      const yaml = blocks[blocks.findIndex((b) => b.line === block.line) - 1];
      if (!yaml) throw new Error(`${where}: no block before`);
      t.true(yaml.lang === 'yaml' && yaml.before.includes(`\`${file}\``), `${where}: the document shows ${file}`);
      await writeFile(join(home, file), `${yaml.body.join('\n')}\n`);
    }
    const demo = block.before.includes('On the demo organization');
    // "(The example then wrote the full component back, ref included.)"
    const writesBack =
      /-X PUT .*\/component\b/s.test(command) &&
      doc.slice(doc.indexOf(command)).split('\n```\n')[2]?.includes('wrote the full component back');
    const id = writesBack ? names.of(/"id":"(\w{26})"/.exec(command)![1]) : undefined;
    const before = id
      ? await (await fetch(`${server.url}/api/external/component/${id}`, { headers: { authorization: `Bearer ${key}` } })).json()
      : undefined;

    const real = parseAnswer(await curl(command, demo));
    if (id) {
      const back = await fetch(`${server.url}/api/external/component`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify([before]),
      });
      t.is(back.status, 200, `${where}: writing the component back`);
    }
    if (!expected) continue;
    if (!real) {
      mismatches.push(`${where}: no HTTP answer`);
      continue;
    }
    checked++;
    if (expected.learnId) names.learn(expected.learnId, (JSON.parse(real.body) as Array<{ id: string }>)[0].id);
    if (expected.code) is(real.status.split(' ')[1], expected.code, `${where}: status`);
    if (expected.status) is(real.status, expected.status, `${where}: status line`);
    for (const [name, value] of Object.entries(expected.headers ?? {})) {
      if (name === 'etag' && real.headers.etag) names.learn(value.replaceAll('"', ''), real.headers.etag.replaceAll('"', ''));
      if (name === 'etag' || name === 'link') is(name in real.headers, true, `${where}: has a ${name} header`);
      else if (COMPARED_HEADERS.includes(name)) is(real.headers[name], names.of(value), `${where}: ${name} header`);
    }
    const yaml = /yaml/.test(real.headers['content-type'] ?? '');
    const shown = parsed(expected.body ?? '', yaml);
    const answered = parsed(real.body, yaml);
    if (!shown) continue;
    if (!answered) {
      mismatches.push(`${where}: the answer is no JSON or YAML: ${real.body.slice(0, 300)}`);
      continue;
    }
    names.learn(shown.value, answered.value);
    if (isObject(shown.value) && typeof shown.value.error === 'string')
      is((answered.value as { error?: unknown }).error, names.of(shown.value.error), `${where}: error text`);
    const differences: string[] = [];
    fieldDifferences(shown.value, answered.value, '$', differences);
    for (const difference of differences) mismatches.push(`${where}: ${difference}`);
  }
  t.deepEqual(mismatches, [], mismatches.join('\n'));
  t.log(`${checked} examples checked`);
  t.true(checked >= 35, `the examples with a shown answer were checked (${checked})`);
});

// Sections 13 (the current form), 17 (drafts) and 19 (change feed, events, webhooks): each example
// (a curl command, a request line of an `http` block, a `$ ` line of a transcript, a git command)
// is found in the document and run by a plan of its own, on a server of its own, that makes what
// the document's run had before it (a tag, a component, a draft both sides renamed a component
// in, a push), as the prose around it says; an example no plan runs fails the test. An answer the
// document abridges (`…`) is held to the fields it shows, in their order; one it shows whole to
// its fields and the number of items of every list; git's output to the lines shown, in order.

/** One runnable example: a curl command (its answer shown as HTTP or as a body) or a git command (its output shown). */
interface Runnable {
  /** `<heading> | <first line>`: what a plan names it by. */
  label: string;
  line: number;
  kind: 'curl' | 'git';
  command: string;
  expected?: Partial<Answer> & { lines?: string[] };
  /** A file the command sends (`--data-binary @template.yaml`), shown beside it. */
  file?: { name: string; content: string };
}

/** A request line of an `http` block: `GET /api/external/…` (no HTTP version: one to the API, not a webhook's delivery). */
const REQUEST_LINE = /^(GET|POST|PUT|PATCH|DELETE) (\/\S*)$/;

function sectionOf(doc: string, number: number): { text: string; firstLine: number } {
  const start = doc.indexOf(`\n## ${number}. `);
  const end = doc.indexOf('\n## ', start + 1);
  return { text: doc.slice(start, end), firstLine: doc.slice(0, start).split('\n').length };
}

/** The `### ` heading a line of a section falls under. */
function headingAt(text: string, offsetLine: number): string {
  const lines = text.split('\n').slice(0, offsetLine);
  for (let i = lines.length - 1; i >= 0; i--) if (lines[i].startsWith('### ')) return lines[i].slice(4).trim();
  return '';
}

/** The command and output pairs of a shell transcript (`$ command`, continued by a trailing `\`, then its output). */
function transcriptOf(body: string[]): Array<{ command: string; output: string[] }> {
  const runs: Array<{ command: string; output: string[] }> = [];
  for (let i = 0; i < body.length; i++) {
    if (!body[i].startsWith('$ ')) {
      runs.at(-1)?.output.push(body[i]);
      continue;
    }
    let command = body[i].slice(2);
    while (command.endsWith('\\') && i + 1 < body.length) command += `\n${body[++i]}`;
    runs.push({ command, output: [] });
  }
  return runs;
}

function runnablesOf(doc: string, number: number): Runnable[] {
  const { text, firstLine } = sectionOf(doc, number);
  const blocks = blocksOf(text, firstLine);
  const found: Runnable[] = [];
  const labelled = (line: number, first: string) => `${headingAt(text, line - firstLine)} | ${first.trim()}`;
  blocks.forEach((block, b) => {
    if (block.lang === 'sh') {
      const commands = commandsOf(block);
      commands.forEach(({ command }, i) => {
        const runnable: Runnable = { label: labelled(block.line, command.split('\n')[0]), line: block.line, kind: 'curl', command };
        let next = blocks[b + 1];
        const file = /--data-binary @(\S+\.yaml)/.exec(command)?.[1];
        // "… with `template.yaml`:" and that file's block, before the answer.
        if (file && next?.lang === 'yaml' && next.before.includes(`\`${file}\``)) {
          runnable.file = { name: file, content: `${next.body.join('\n')}\n` };
          next = blocks[b + 2];
        }
        if (i === commands.length - 1 && next) {
          if (['http', 'text', ''].includes(next.lang) && !REQUEST_LINE.test(next.body[0] ?? ''))
            runnable.expected = parseAnswer(next.body.join('\n'));
          else if (next.lang === 'json') runnable.expected = { headers: {}, body: next.body.join('\n') };
        }
        found.push(runnable);
      });
    } else if (block.lang === 'http' && REQUEST_LINE.test(block.body[0] ?? '')) {
      let at = 0;
      while (at < block.body.length) {
        const [, method, path] = REQUEST_LINE.exec(block.body[at])!;
        let end = at + 1;
        while (end < block.body.length && !REQUEST_LINE.test(block.body[end])) end++;
        found.push({
          label: labelled(block.line, block.body[at]),
          line: block.line + 1 + at,
          kind: 'curl',
          command: `curl -X ${method} "$BASE${path}" -H "Authorization: Bearer $KEY"`,
          expected: parseAnswer(block.body.slice(at + 1, end).join('\n')),
        });
        at = end;
      }
    } else if (block.lang === '' && block.body[0]?.startsWith('$ ')) {
      for (const { command, output } of transcriptOf(block.body)) {
        const shown = output.join('\n').trim();
        const git = command.startsWith('git ');
        found.push({
          label: labelled(block.line, `$ ${command.split('\n')[0]}`),
          line: block.line,
          kind: git ? 'git' : 'curl',
          command,
          expected: git ? { lines: shown.split('\n') } : /^HTTP\//.test(shown) ? parseAnswer(shown) : { headers: {}, body: shown },
        });
      }
    }
  });
  return found;
}

/** A shown body with what the document left out (`…` outside strings: fields, items, lines) taken away. */
function parsedShown(text: string, yaml: boolean): { value: unknown; abridged: boolean } | undefined {
  if (text === '') return undefined;
  if (yaml) {
    const kept = text.split('\n').filter((line) => !line.trim().startsWith('…'));
    try {
      return { value: parseYaml(kept.join('\n')), abridged: kept.length < text.split('\n').length };
    } catch {
      return undefined;
    }
  }
  let json = '';
  let inString = false;
  let abridged = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"' && text[i - 1] !== '\\') inString = !inString;
    if (c === '…' && !inString) abridged = true;
    else json += c;
  }
  for (let before = ''; before !== json; ) {
    before = json;
    json = json.replace(/,(\s*[,\]}])/g, '$1').replace(/([[{]\s*),/g, '$1');
  }
  try {
    return { value: JSON.parse(json), abridged };
  } catch {
    return undefined;
  }
}

/**
 * A git command's output as compared: commit ids and times, which differ from run to run, masked;
 * so are the counts of changed lines `--stat` shows, which depend on them (a referrer rewritten
 * in the second it was written keeps its `apiContext` line).
 */
const masked = (line: string) =>
  line
    .replace(/\b[0-9a-f]{7,40}\b/g, '<commit>')
    .replace(/\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d\S*/g, '<time>')
    .replace(/ \| +\d+ [+-]*$/, ' | <changes>')
    .replace(/^ \d+ files? changed.*/, ' <files changed>')
    .trimEnd();

/** What a plan does besides running the document's examples: what the document's run did unseen. */
interface PlanContext {
  /** A request of the current organization's key; refused (not 2xx) fails the plan. */
  call(method: string, path: string, body?: unknown): Promise<{ body: any; etag: string }>;
  /** The current organization's git directory. */
  gitdir: string;
  names: Names;
  home: string;
  url: string;
  key: string;
}

type Step = string | { org: string; args?: string[]; label?: string } | ((context: PlanContext) => Promise<void>);

async function runPlan(t: import('ava').ExecutionContext, number: number, plan: Step[], ...serveArgs: string[]): Promise<void> {
  const doc = await readFile(DOC, 'utf8');
  const runnables = runnablesOf(doc, number);
  const home = await mkdtemp(join(tmpdir(), `c4store-api-doc-${number}-`));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  const data = join(home, 'data');
  await mkdir(data);
  const server = await serveProcess(data, ...serveArgs);
  t.teardown(() => server.stop());
  const host = new URL(server.url).host;
  const names = new Names();
  const mismatches: string[] = [];
  const ran = new Set<Runnable>();
  let key = '';
  let gitdir = '';
  const context = (): PlanContext => ({
    async call(method, path, body) {
      const response = await fetch(`${server.url}/api/external${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`setup: ${method} ${path}: ${response.status} ${text}`);
      return { body: text === '' ? undefined : JSON.parse(text), etag: (response.headers.get('etag') ?? '').replaceAll('"', '') };
    },
    gitdir,
    names,
    home,
    url: server.url,
    key,
  });
  for (const step of plan) {
    if (typeof step === 'function') {
      await step(context());
      continue;
    }
    if (typeof step === 'object') {
      const created = lastLine(await cli('org', 'create', step.org, ...(step.args ?? []), '--data', data));
      key = step.label ? lastLine(await cli('key', 'create', step.org, '--label', step.label, '--data', data)) : created;
      gitdir = join(data, 'orgs', `${step.org}.git`);
      continue;
    }
    // A step names an example by its first line whole, or by a part of its label only it has.
    const whole = runnables.filter((r) => r.label.endsWith(` | ${step}`));
    const matching = whole.length > 0 ? whole : runnables.filter((r) => r.label.includes(step));
    if (matching.length !== 1) throw new Error(`plan step '${step}' names ${matching.length} examples of §${number}`);
    const [example] = matching;
    ran.add(example);
    const where = `docs/api.md line ${example.line}: ${example.command.split('\n')[0]}`;
    if (example.file) await writeFile(join(home, example.file.name), example.file.content);
    const command = names.of(example.command).replaceAll('localhost:8080', host);
    const env = { ...process.env, KEY: key, BASE: server.url, API: `${server.url}/api/external` };
    if (example.kind === 'git') {
      const { stdout } = await run('bash', ['-c', command], { cwd: gitdir, env });
      const real = stdout.split('\n').map(masked);
      let at = 0;
      for (const line of example.expected?.lines ?? []) {
        const wanted = masked(names.of(line));
        const found = real.indexOf(wanted, at);
        if (found < 0) {
          mismatches.push(`${where}: the document shows '${line}', which git's output lacks (after line ${at}): \n${stdout}`);
          break;
        }
        at = found + 1;
      }
      continue;
    }
    const { stdout } = await run('bash', ['-c', command.replace(/^curl /, 'curl -sS -i ')], {
      cwd: home,
      env,
      maxBuffer: 64 * 1024 * 1024,
    });
    const real = parseAnswer(stdout);
    const expected = example.expected;
    if (!expected) continue;
    if (!real) {
      mismatches.push(`${where}: no HTTP answer`);
      continue;
    }
    const is = (actual: unknown, shown: unknown, what: string) => {
      if (actual !== shown)
        mismatches.push(`${where}: ${what}: the document shows ${JSON.stringify(shown)}, the server answered ${JSON.stringify(actual)}`);
    };
    if (expected.status) is(real.status, expected.status, 'status line');
    for (const [name, value] of Object.entries(expected.headers ?? {})) {
      if (name === 'etag' && real.headers.etag) names.learn(value.replaceAll('"', ''), real.headers.etag.replaceAll('"', ''));
      if (name === 'etag' || name === 'link') is(name in real.headers, true, `has a ${name} header`);
      else if (COMPARED_HEADERS.includes(name)) is(real.headers[name], names.of(value), `${name} header`);
    }
    const yaml = /yaml/.test(real.headers['content-type'] ?? '');
    const shown = parsedShown(expected.body ?? '', yaml);
    if (!shown) {
      if ((expected.body ?? '') !== '') mismatches.push(`${where}: the document's answer does not parse`);
      continue;
    }
    const answered = parsed(real.body, yaml);
    if (!answered) {
      mismatches.push(`${where}: the answer is no JSON or YAML: ${real.body.slice(0, 300)}`);
      continue;
    }
    names.learn(shown.value, answered.value);
    if (isObject(shown.value) && typeof shown.value.error === 'string' && !shown.value.error.includes('…'))
      is((answered.value as { error?: unknown }).error, names.of(shown.value.error), 'error text');
    const differences: string[] = [];
    fieldDifferences(shown.value, answered.value, '$', differences, { abridged: shown.abridged, lengths: true });
    for (const difference of differences) mismatches.push(`${where}: ${difference}`);
  }
  const unplanned = runnables.filter((r) => !ran.has(r));
  t.deepEqual(
    unplanned.map((r) => `line ${r.line}: ${r.label}`),
    [],
    'every example of the section is run by the plan',
  );
  t.deepEqual(mismatches, [], mismatches.join('\n'));
  t.log(`§${number}: ${ran.size} examples run`);
}

test("docs/api.md's examples of section 13 (the current form) answer as the document shows", (t) =>
  runPlan(t, 13, [
    { org: 'acme' },
    // "The tag `pci` was created just before"; the Ledger DB the diagram places and the batch updates.
    async ({ call }) => {
      await call('POST', '/tags', { id: 'pci', name: 'PCI scope', color: 'red' });
      await call('POST', '/components', { id: 'ledger-db', name: 'Ledger DB', typeSlug: 'database' });
    },
    'Ids chosen by the client | curl -X POST',
    'tag ids | curl -X POST',
    'PATCH | curl -X PATCH',
    'upsert-batch | curl -X PATCH',
    'Template | curl -X POST',
    'GET /api/external/components?nmae=Ledger',
    'GET /api/external/search/components?name=LEDGER',
    'GET /api/external/search/diagrams?componentId=ledger-db',
    'GET /api/external/search/dependencies?componentId=payment-api',
    'GET /api/external/search/components',
    'DELETE /api/external/components/ledger-db',
    'DELETE /api/external/components/ledger-db?cascade=true',
    '$ git log --stat -1',
  ]));

/**
 * Draft payments-v2 as §17.2's run had it: component pay renamed one way in the draft, another on
 * main. That run made them all in one second, so `apiContext` (the request's time when omitted)
 * changed in none: here it is given, the same each time, for the run's answers whatever the clock.
 */
const API_CONTEXT = '2026-11-26 17:21:45';
const PAY = { id: 'pay', name: 'Payments', apiContext: API_CONTEXT };
const renamedBothWays = async ({ call }: PlanContext) => {
  await call('PATCH', '/components/pay?draft=payments-v2', { name: 'Payments Hub', apiContext: API_CONTEXT });
  await call('PATCH', '/components/pay', { name: 'Payment Service', apiContext: API_CONTEXT });
};

test("docs/api.md's examples of section 17 (drafts) answer as the document shows", (t) =>
  runPlan(t, 17, [
    { org: 'acme' },
    async ({ call }) => {
      await call('POST', '/components', PAY);
    },
    '$ curl -i -X POST $API/drafts -H',
    '$ curl -X POST "$API/components?draft=payments-v2"',
    renamedBothWays,
    '# after the draft and main both renamed component pay',
    '$ curl -i -X POST $API/drafts/payments-v2/merge -H "Authorization: Bearer $KEY"',
    '$ curl -i -X POST $API/drafts/payments-v2/merge -H "Authorization: Bearer $KEY" \\',
    '17.2 Endpoints | $ git log --graph --oneline main',

    // "From a real run (a push renaming the organization, Grace for Linus)".
    { org: 'people', args: ['--name', 'Acme', '--member', 'ada@example.com', '--member', 'linus@example.com'] },
    async ({ home, url, key }) => {
      const clone = join(home, 'people');
      const remote = `http://push:${key}@${new URL(url).host}/git/people.git`;
      await run('git', ['clone', '-q', remote, clone]);
      const file = join(clone, 'organization.yaml');
      const text = await readFile(file, 'utf8');
      await writeFile(file, text.replace(/^name: Acme$/m, 'name: Acme Corp').replace('linus@example.com', 'grace@example.com'));
      await run('git', [
        '-C',
        clone,
        '-c',
        'user.name=Ada',
        '-c',
        'user.email=ada@example.com',
        'commit',
        '-q',
        '-am',
        'Acme Corp; Grace for Linus',
      ]);
      await run('git', ['-C', clone, 'push', '-q', 'origin', 'HEAD:refs/heads/drafts/people']);
    },
    '$ curl $API/drafts/people/diff',

    // "A merge like 17.2's (take "draft" on pay's name), then one more write to main."
    { org: 'merged' },
    async (context) => {
      const { call } = context;
      await call('POST', '/components', PAY);
      await call('POST', '/drafts', { name: 'payments-v2', title: 'Payments v2', desc: 'Fraud checks before the ledger' });
      await call('POST', '/components?draft=payments-v2', { id: 'fraud', name: 'Fraud Check' });
      await renamedBothWays(context);
      await call('POST', '/drafts/payments-v2/merge', { resolutions: [{ kind: 'component', id: 'pay', field: 'name', take: 'draft' }] });
      await call('POST', '/components', { id: 'audit', name: 'Audit' });
    },
    '# a merge like 17.2',
    '17.3 The merge | $ git log --graph --oneline main',
  ]));

/** The lines of the first block of a section that starts with `start`. */
function shownBlock(doc: string, number: number, start: string): string[] {
  const { text, firstLine } = sectionOf(doc, number);
  const block = blocksOf(text, firstLine).find((b) => b.body[0]?.startsWith(start));
  if (!block) throw new Error(`§${number} has no block starting '${start}'`);
  return block.body;
}

/** An event stream's frames: each its `field: value` and comment lines. */
const framesOf = (text: string) => text.split('\n\n').map((frame) => frame.split('\n').filter((line) => line !== ''));
const fieldOf = (frame: string[], name: string) => frame.find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2);

/** `path`'s Server-Sent Events as they come, read until `enough` holds of them; `meanwhile` runs once the stream is open. */
async function streamed(url: string, key: string, enough: (text: string) => boolean, meanwhile = async () => {}): Promise<string> {
  const stop = new AbortController();
  const response = await fetch(url, { headers: { authorization: `Bearer ${key}` }, signal: stop.signal });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const reading = (async () => {
    while (!enough(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  })();
  await meanwhile();
  await reading;
  stop.abort();
  return text;
}

test("docs/api.md's examples of section 19 (change feed, events and webhooks) answer as the document shows", async (t) => {
  const doc = await readFile(DOC, 'utf8');
  /** What the document shows of a frame's `data:` (the fields, `…` for what it leaves out) against a real frame's. */
  const sameData = (shown: string[], real: string[], what: string) => {
    const shownData = parsedShown(fieldOf(shown, 'data') ?? '', false);
    const realData = JSON.parse(fieldOf(real, 'data') ?? 'null');
    const differences: string[] = [];
    fieldDifferences(shownData?.value, realData, '$', differences, { abridged: shownData?.abridged, lengths: true });
    t.deepEqual(differences, [], `${what}: ${real.join(' / ')}`);
    t.truthy(fieldOf(real, 'id'), `${what} has an id: line`);
  };
  let before = '';
  await runPlan(
    t,
    19,
    [
      // The feed's example: a pipeline's import after the commit 2791c1f… (Billing made), and a commit after it.
      { org: 'acme', label: 'pipeline' },
      async ({ call, names }) => {
        const made = await call('POST', '/component', [{ name: 'Billing' }]);
        names.alias('2791c1f…', made.etag);
        before = made.etag;
        await call('POST', '/component', [
          { name: 'Ledger', apiContext: 'import #42' },
          { id: made.body[0].id, name: 'Billing', desc: 'Invoices', apiContext: 'import #42' },
        ]);
        await call('POST', '/component', [{ name: 'Audit' }]);
      },
      '"$BASE/api/external/changes?after=2791c1f…&limit=2"',
      // §19.2's stream, from after the same commit: its opening lines, then a change as a frame.
      async ({ url, key }) => {
        const shown = framesOf(shownBlock(doc, 19, 'retry:').join('\n'));
        const text = await streamed(`${url}/api/external/events?after=${before}`, key, (read) => read.includes('event: change'));
        const real = framesOf(text);
        t.deepEqual(real[0], shown[0], "the stream's opening lines");
        sameData(shown[1], real.find((frame) => fieldOf(frame, 'event') === 'change') ?? [], '§19.2: a change');
      },
      // §19.5's draft event: a draft opened and merged while the stream is open.
      async ({ url, key, call }) => {
        const shown = framesOf(shownBlock(doc, 19, 'id: ').join('\n'))[0];
        const text = await streamed(
          `${url}/api/external/events`,
          key,
          (read) => read.includes('event: draft.merged'),
          async () => {
            await call('POST', '/drafts', { name: 'payments-v2' });
            await call('POST', '/component?draft=payments-v2', [{ name: 'Fraud Check' }]);
            await call('POST', '/drafts/payments-v2/merge');
          },
        );
        const real = framesOf(text);
        const merged = real.findIndex((frame) => fieldOf(frame, 'event') === 'draft.merged');
        t.is(fieldOf(shown, 'event'), 'draft.merged');
        sameData(shown, real[merged], '§19.5: draft.merged');
        const change = real.findIndex((frame) =>
          JSON.parse(fieldOf(frame, 'data') ?? '{}').title?.startsWith("Merged draft 'payments-v2'"),
        );
        t.true(change >= 0 && change < merged, "the merge's change comes before its draft.merged");
      },
      // Its receiver's name would have to resolve here: the server takes any target (--webhook-allow-private).
      'curl -X POST "$BASE/api/external/webhooks"',
      // §19.3's delivery and §19.5's payload, as a real receiver on this machine gets them.
      async ({ call }) => {
        const receiver = await Receiver.start();
        t.teardown(() => receiver.close());
        const shownRequest = shownBlock(doc, 19, 'POST /c4store ');
        const shownPath = shownRequest[0].split(' ')[1];
        const made = await call('POST', '/webhooks', { url: `${new URL(receiver.url).origin}${shownPath}` });
        const { id: subscription, secret, delivered } = made.body as { id: string; secret: string; delivered: string };
        const before = (await call('GET', '/changes')).etag;
        const commit = (await call('POST', '/component', [{ name: 'Hooked' }])).etag;
        await receiver.until(() => receiver.delivered.length >= 1);
        const feed = (await call('GET', `/changes?after=${before}`)).body.changes;
        t.is(delivered, before, 'a subscription starts at the tip of main');
        checkDelivery(receiver.delivered[0]!, shownRequest, { subscription, secret, commit, data: feed[0] });

        await call('POST', '/drafts', { name: 'hooked' });
        const head = (await call('POST', '/component?draft=hooked', [{ name: 'Fraud Check' }])).etag;
        const merge = (await call('POST', '/drafts/hooked/merge')).body as { commit: string };
        const isMerged = (r: Received) => JSON.parse(r.body).type === 'draft.merged';
        await receiver.until(() => receiver.delivered.some(isMerged), 30_000, 'draft.merged');
        const merged = receiver.delivered.find(isMerged)!;
        const shownPayload = parsedShown(shownBlock(doc, 19, '{"type": "draft.merged"').join('\n'), false);
        const payload = new Webhook(secret).verify(merged.body, merged.headers as Record<string, string>) as {
          timestamp: string;
          data: { time?: string };
        };
        const differences: string[] = [];
        fieldDifferences(shownPayload?.value, payload, '$', differences, { abridged: shownPayload?.abridged, lengths: true });
        t.deepEqual(differences, [], `§19.5: a draft.merged payload: ${merged.body}`);
        t.like(payload.data, { name: 'hooked', state: 'merged', head, commit: merge.commit }, '§19.5: head, and commit the merge commit');
        t.is(payload.timestamp, payload.data.time ?? '', "§19.5: the payload's timestamp is its data's time, as shown");
        t.regex(
          String(merged.headers['webhook-id']),
          new RegExp(`^msg_draft_\\w+_${subscription.replace(/^wh_/, '')}$`),
          '§19.5: webhook-id',
        );
      },
    ],
    '--webhook-allow-private',
  );

  /**
   * One delivery against §19.3's shown one: its request line's method and path, the headers shown
   * (Content-Type as shown; webhook-id of the commit and the subscription; a timestamp in seconds;
   * a signature `standardwebhooks` verifies with the subscription's secret, as the document's
   * receiver does), and a body of the fields shown whose `data` is the change as the feed has it.
   */
  function checkDelivery(
    real: Received,
    shown: string[],
    { subscription, secret, commit, data }: { subscription: string; secret: string; commit: string; data: { time: string } },
  ) {
    const blank = shown.indexOf('');
    const [method, path] = shown[0].split(' ');
    t.is(`${real.method} ${real.path}`, `${method} ${path}`, '§19.3: the request line');
    const headers: Record<string, string> = Object.fromEntries(
      shown.slice(1, blank).map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    );
    t.deepEqual(Object.keys(headers).sort(), ['content-type', 'webhook-id', 'webhook-signature', 'webhook-timestamp']);
    t.is(String(real.headers['content-type']), headers['content-type'] ?? '', '§19.3: Content-Type');
    // The document's webhook-id names its subscription (§19.3's wh_3f9c…) and its commit; this one, this run's.
    const shownId = /^msg_([0-9a-f]{40})_(\w+)$/.exec(headers['webhook-id'] ?? '');
    const shownSubscription = JSON.parse(shownBlock(doc, 19, '{"id": "wh_').join('\n')) as { id: string; delivered: string };
    t.is(`wh_${shownId?.[2]}`, shownSubscription.id, '§19.3: the shown webhook-id names the shown subscription');
    // "the first event it receives is the next commit": not the one it started at.
    t.not(shownId?.[1], shownSubscription.delivered, "§19.3: the shown delivery is of a commit after the subscription's start");
    t.is(real.headers['webhook-id'], `msg_${commit}_${subscription.replace(/^wh_/, '')}`, '§19.3: webhook-id');
    t.regex(headers['webhook-timestamp'] ?? '', /^\d+$/);
    t.regex(String(real.headers['webhook-timestamp']), /^\d+$/, '§19.3: webhook-timestamp, in seconds');
    t.regex(headers['webhook-signature'] ?? '', /^v1,[A-Za-z0-9+/]{43}=$/);
    t.regex(String(real.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/, '§19.3: webhook-signature');
    const verified = new Webhook(secret).verify(real.body, real.headers as Record<string, string>);
    // The body: the fields shown, `data` (shown as "…the change, as in the feed…") the feed's change.
    const shownBody = JSON.parse(
      shown
        .slice(blank + 1)
        .join('\n')
        .replace(/\{ …[^}]*… \}/, '{}'),
    ) as Record<string, unknown>;
    const body = JSON.parse(real.body) as Record<string, unknown>;
    t.deepEqual(verified, body, '§19.3: the signature verifies');
    t.deepEqual(Object.keys(body), Object.keys(shownBody), `§19.3: the body's fields: ${real.body}`);
    t.is(body.type, shownBody.type);
    t.deepEqual(body.data, data, '§19.3: data is the change, as in the feed');
    t.is(body.timestamp, data.time, "§19.3: the body's timestamp is the commit's");
    t.regex(String(shownBody.timestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
    // webhook-timestamp is the attempt's time, which comes after the commit's (the body's timestamp), shown and real.
    const seconds = (iso: unknown) => Date.parse(String(iso)) / 1000;
    t.true(Number(headers['webhook-timestamp']) >= seconds(shownBody.timestamp), '§19.3: the shown attempt is after the shown commit');
    t.true(Number(real.headers['webhook-timestamp']) >= seconds(body.timestamp), '§19.3: the attempt is after the commit');
  }
});
