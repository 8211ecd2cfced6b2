import test from 'ava';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
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
 * rest afterwards in the document's order.
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
  of(text: string): string {
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

/** Where the field names of `shown` and `real` differ, object by object. */
function fieldDifferences(shown: unknown, real: unknown, path: string, out: string[]): void {
  if (Array.isArray(shown)) {
    if (!Array.isArray(real)) out.push(`${path}: the document shows an array, the server answered ${JSON.stringify(real)}`);
    else
      shown.forEach((item, i) => {
        if (i < real.length) fieldDifferences(item, real[i], `${path}.${i}`, out);
      });
  } else if (isObject(shown)) {
    if (!isObject(real)) out.push(`${path}: the document shows an object, the server answered ${JSON.stringify(real)}`);
    else {
      if (Object.keys(shown).join() !== Object.keys(real).join())
        out.push(`${path}: the document shows fields ${Object.keys(shown).join(', ')}; the server answers ${Object.keys(real).join(', ')}`);
      for (const key of Object.keys(shown)) fieldDifferences(shown[key], real[key], `${path}.${key}`, out);
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
