import test from 'ava';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, serveProcess } from './support/process.js';
import { run } from './support/server.js';

/**
 * README.md's examples, taken from README.md itself and run as a reader would: in a shell, in the
 * directory `npm start` was run from (so `data/orgs/demo.git` is the demo's repository), against a
 * fresh `serve --demo`, with the key it printed.
 */

const README = join(import.meta.dirname, '..', 'README.md');
const PRINTED_ORIGIN = 'http://127.0.0.1:8080';

interface Block {
  lang: string;
  body: string;
  /** The last non-blank line of prose before the block. */
  intro: string;
}

/** The fenced blocks of the README between `## Using the API` and the next section that is not about using it. */
function exampleBlocks(readme: string): Block[] {
  const start = readme.indexOf('\n## Using the API');
  // From "Tools" on, the sections show other programs (client generators, CI, editors, the viewer).
  const end = readme.indexOf('\n## Tools: OpenAPI, editors, CI and exports');
  const lines = readme.slice(start, end).split('\n');
  const blocks: Block[] = [];
  let intro = '';
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\w*)$/.exec(lines[i]);
    if (!fence) {
      if (lines[i].trim() !== '') intro = lines[i];
      continue;
    }
    const body: string[] = [];
    for (i++; lines[i] !== '```'; i++) body.push(lines[i]);
    blocks.push({ lang: fence[1], body: body.join('\n') + '\n', intro });
  }
  return blocks;
}

/** A shell line that shows a command and the output that follows it (`$ git log …`). */
function shownCommand(block: Block): { command: string; output: string } | undefined {
  if (block.lang !== '' || !block.body.startsWith('$ ')) return undefined;
  const [first, ...rest] = block.body.split('\n');
  return { command: first.slice(2), output: rest.join('\n') };
}

/**
 * What varies from run to run: commit ids, resource ids, times, and the shard folders that
 * follow from the ids — with them the order of `git log --stat`'s file lines (sorted by path).
 */
function normalized(text: string): string {
  const lines = text
    .replace(/\b[0-9a-f]{40}\b/g, '<commit>')
    .replace(/\b[0-9a-hjkmnp-tv-z]{26}\b/g, '<id>')
    .replace(/\b(components|diagrams)\/[0-9a-f]{2}\//g, '$1/<shard>/')
    .replace(/^Date: .*$/gm, 'Date: <date>')
    .replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/g, '<time>')
    .replace(/[ \t]+$/gm, '')
    .split('\n');
  const stat = lines.flatMap((line, i) => (/^ \S+\.yaml +\| /.test(line) ? [i] : []));
  const sorted = stat.map((i) => lines[i]).sort();
  stat.forEach((i, k) => {
    lines[i] = sorted[k];
  });
  return lines.join('\n');
}

test('every README example runs as printed against a fresh serve --demo, with the key it printed', async (t) => {
  const readme = await readFile(README, 'utf8');
  const blocks = exampleBlocks(readme);
  const shells = blocks.filter((b) => b.lang === 'sh');
  t.true(shells.length >= 3, 'the README has its shell examples');
  t.false(
    shells.some((b) => /<[a-z]+>/.test(b.body)),
    'no example needs a placeholder filled in',
  );

  const home = await mkdtemp(join(tmpdir(), 'c4store-readme-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  await mkdir(join(home, 'data'));
  const server = await serveProcess(join(home, 'data'), '--demo');
  t.teardown(() => server.stop());
  const key = server.output.find((line) => /^c4s_[A-Za-z0-9_-]{43}$/.test(line));
  t.truthy(key, server.output.join('\n'));

  // curl as printed, made to stop the script on the first answer that is not 2xx.
  const script = [
    'set -euo pipefail',
    `cd '${home}'`,
    'curl() { command curl -sS --fail-with-body -o "$OLDPWD_HOME/body" -w "%{http_code}\\n" "$@" >> "$OLDPWD_HOME/statuses" ' +
      '|| { echo "failed: curl $*" >&2; cat "$OLDPWD_HOME/body" >&2; exit 1; }; }',
  ];
  const shown: Array<{ command: string; output: string; file: string }> = [];
  let curls = 0;
  for (const block of blocks) {
    const saveAs = /Save this as `([^`]+)`/.exec(block.intro);
    if (saveAs) {
      await writeFile(join(home, saveAs[1]), block.body);
      continue;
    }
    const command = shownCommand(block);
    if (command) {
      const file = join(home, `shown-${shown.length}.txt`);
      shown.push({ ...command, file });
      script.push(`(${command.command}) > '${file}'`);
      continue;
    }
    if (block.lang !== 'sh') continue;
    curls += block.body.split('\n').filter((line) => /^curl\b/.test(line)).length;
    script.push(block.body.replace(/^KEY=\S+/m, `KEY=${key}`).replaceAll(PRINTED_ORIGIN, server.url));
  }
  t.true(shown.length > 0, 'the README shows a command with its output');

  const result = await run('bash', ['-c', script.join('\n')], { env: { ...process.env, OLDPWD_HOME: home } }).catch(
    (err: { stderr: string; stdout: string }) => ({ failed: true, ...err }),
  );
  t.false('failed' in result, 'failed' in result ? `${result.stderr}\n${result.stdout}` : '');
  const statuses = (await readFile(join(home, 'statuses'), 'utf8')).trim().split('\n');
  t.is(statuses.length, curls, 'every curl of the README ran');
  t.true(
    statuses.every((status) => /^2\d\d$/.test(status)),
    statuses.join(' '),
  );

  for (const { command, output, file } of shown) {
    t.is(normalized(await readFile(file, 'utf8')), normalized(output), `the output README shows for: ${command}`);
  }

  // The examples extend the demo's model rather than repeating what it already has.
  const model = await fetch(`${server.url}/api/external/model`, { headers: { authorization: `Bearer ${key}` } });
  const body = (await model.json()) as Record<string, Array<{ name: string }>>;
  for (const kind of ['tags', 'attributes', 'components', 'diagrams']) {
    const names = body[kind].map((resource) => resource.name);
    t.deepEqual(
      names.filter((name, i) => names.indexOf(name) !== i),
      [],
      `no two ${kind} share a name`,
    );
  }
});

/** A synopsis as one line per command: continuation lines joined, runs of spaces as one, comments left out. */
function synopsis(lines: readonly string[]): string[] {
  const commands: string[] = [];
  for (const line of lines) {
    const text = line.replace(/#.*$/, '').replace(/\s+/g, ' ').trim();
    if (text === '') continue;
    if (text.startsWith('c4store ')) commands.push(text);
    else commands[commands.length - 1] += ` ${text}`;
  }
  return commands;
}

test("README's command line section shows every command and option that `c4store --help` prints", async (t) => {
  const help = (await cli('--help')).split('\n');
  const usage = help.slice(help.indexOf('Usage:') + 1, help.indexOf('', help.indexOf('Usage:')));
  const readme = await readFile(README, 'utf8');
  const section = readme.slice(readme.indexOf('\n## Command line'));
  const block = section.slice(section.indexOf('\n```\n') + 5, section.indexOf('\n```', section.indexOf('\n```\n') + 5));
  t.true(usage.length > 10, 'the help has a synopsis');
  t.deepEqual(synopsis(block.split('\n')), synopsis(usage));
});
