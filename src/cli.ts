#!/usr/bin/env node
import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, readlinkSync, statSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { checkDirectory } from './check/check.js';
import { EXPORT_FORMATS, exportModel, findDiagram, isExportFormat } from './export/formats.js';
import { openapiJson } from './openapi/document.js';
import { rewriteEveryFile } from './editor/upgrade.js';
import { SCHEMA_DIR } from './editor/schemas.js';
import { putOrganization } from './model/draft.js';
import { newId } from './model/ids.js';
import { memberCalled } from './model/rules.js';
import { apiContextOf } from './http/resource.js';
import { redactUrl } from './credentials.js';
import { detailedMessage } from './errors.js';
import { checkMirrorUrl, DEFAULT_MIRROR_INTERVAL, DEFAULT_MIRROR_TIMEOUT, readMirrors, updateMirrors } from './mirror/config.js';
import { readMirrorState } from './mirror/pusher.js';
import { checkPush, parseRefUpdates, pushLimits, pushOptions, quarantineEnvironment } from './push/check.js';
import { DEFAULT_LIMITS, LIMIT_OPTIONS, LONGEST_TIMER_SECONDS, type Limits } from './limits/limits.js';
import { startServer } from './server.js';
import { type CreateOrgOptions, Orgs } from './service/orgs.js';
import { checkKeyLabel, KeyStore, type Role } from './store/keys.js';
import { EVENT_TYPES, type EventType, WebhookStore } from './events/webhook-store.js';
import { checkTargetUrl } from './events/targets.js';
import { readDraftStates } from './events/draft-notices.js';

const USAGE = `c4store — a git-backed store for C4 architecture models

Usage:
  c4store serve [--data DIR] [--port 8080] [--host 127.0.0.1] [--public-url URL] [--durable] [--demo]
                [--pack-every COMMITS] [--reads-per-minute N] [--writes-per-minute N]
                [--max-connections N] [--max-connections-per-address N]
                [--max-write-elements N] [--max-diagram-instances N] [--max-diagram-relations N]
                [--max-diagram-textareas N] [--max-org-components N] [--layout-timeout S] [--write-timeout S]
                [--drain-delay S] [--shutdown-timeout S] [--metrics-token TOKEN]
                [--webhook-allow-private]
  c4store org create <slug> [--name NAME] [--member EMAIL]... [--from DIR] [--label LABEL] [--data DIR]
  c4store key create <slug> [--label LABEL] [--role editor|reader] [--data DIR]
  c4store key revoke <slug> <key-id> [--data DIR]
  c4store key list <slug> [--data DIR]
  c4store member add <slug> <email> [--data DIR]
  c4store mirror add <slug> <url> [--interval SECONDS] [--timeout SECONDS] [--data DIR]
  c4store mirror remove <slug> <url> [--data DIR]
  c4store mirror list [<slug>] [--data DIR]
  c4store webhook add <slug> <url> [--event TYPE]... [--webhook-allow-private] [--data DIR]
  c4store webhook list <slug> [--data DIR]
  c4store webhook remove <slug> <webhook-id> [--data DIR]
  c4store upgrade <slug> [--data DIR]
  c4store export <slug> --format structurizr|plantuml|mermaid|likec4 [--diagram ID|REF] [--data DIR]
  c4store check [DIR]
  c4store openapi                      # the OpenAPI 3.1 document (docs/openapi.json)

The data directory defaults to $C4STORE_DATA, else ./data. --durable (or C4STORE_DURABLE=1)
fsyncs every write before answering it (serve, and the commits of org create, member add
and upgrade). --demo creates organization 'demo' from sample-repo/
when the data directory has no organization yet, and prints its key. --reads-per-minute and
--writes-per-minute limit each API key (per process; default unlimited: 429 beyond);
--max-connections (default 1000) and --max-connections-per-address (default 100) cap open
connections (503 beyond; behind a reverse proxy, set the second to the first).
--pack-every packs a repository's loose objects (git repack) after that many commits and
30 s after start (default 1000; 0: never; the commit graph history uses is kept either way). The --max-* options raise
or lower the bounds on one write, one diagram and one organization (defaults: ${defaultLimits()}).
--layout-timeout (default 30) and --write-timeout (default 60) cancel an automatic layout or a
large write that runs longer, in seconds. On SIGTERM, serve answers /healthz with 503 and keeps
serving for --drain-delay seconds (default 5) so a load balancer moves away, then accepts no new
connection, lets requests in flight finish for up to --shutdown-timeout seconds (default 30),
stops packing and mirrors, and exits 0; SIGINT (Ctrl-C) does the same without the delay.
/metrics (Prometheus) is served to loopback clients only, or to any that sends
Authorization: Bearer <--metrics-token> (or $C4STORE_METRICS_TOKEN) when one is given.
Webhooks (docs/api.md §19) are refused for private and
loopback addresses unless serve (and webhook add) run with --webhook-allow-private; webhook add
prints the signing secret (whsec_…) once, as the last line.
An option a command does not take is refused. Numbers are decimal digits; a number of seconds is at most 2147483 (the longest a timer waits).
org create and key create print the new API key as the last line of standard output.
upgrade moves an organization's repository from the flat layout (components/<id>.yaml) to
the sharded one (components/<shard>/<id>.yaml) in one commit (serve does so at start-up),
then rewrites every file with its editor schema line and adds .c4store/schemas/ in another.
export writes the model (or one diagram) to standard output. check reads a clone (default: the
current directory), prints each problem as file:line: message and exits 1 when there is one.`;

class UsageError extends Error {}

const CLI_AUTHOR = { name: 'c4store command line', email: 'cli@c4store' };
const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const OPTIONS = {
  data: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  'public-url': { type: 'string' },
  durable: { type: 'boolean' },
  demo: { type: 'boolean' },
  name: { type: 'string' },
  member: { type: 'string', multiple: true },
  from: { type: 'string' },
  label: { type: 'string' },
  role: { type: 'string' },
  interval: { type: 'string' },
  timeout: { type: 'string' },
  'pack-every': { type: 'string' },
  format: { type: 'string' },
  diagram: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  'reads-per-minute': { type: 'string' },
  'writes-per-minute': { type: 'string' },
  'max-connections': { type: 'string' },
  'max-connections-per-address': { type: 'string' },
  'layout-timeout': { type: 'string' },
  'write-timeout': { type: 'string' },
  'drain-delay': { type: 'string' },
  'shutdown-timeout': { type: 'string' },
  'metrics-token': { type: 'string' },
  event: { type: 'string', multiple: true },
  'webhook-allow-private': { type: 'boolean' },
  ...Object.fromEntries(Object.values(LIMIT_OPTIONS).map((name) => [name, { type: 'string' }] as const)),
} as const;

/** serve's own options: the ones of the usage's first lines. */
const SERVE_OPTIONS = [
  'port',
  'host',
  'public-url',
  'durable',
  'demo',
  'pack-every',
  'reads-per-minute',
  'writes-per-minute',
  'max-connections',
  'max-connections-per-address',
  'layout-timeout',
  'write-timeout',
  'drain-delay',
  'shutdown-timeout',
  'metrics-token',
  'webhook-allow-private',
  ...Object.values(LIMIT_OPTIONS),
];

/**
 * The options each command takes besides --help (and --data, for those with a data directory):
 * any other is refused, not ignored — key create --name made a key labelled 'api', unsaid.
 */
const COMMAND_OPTIONS: Record<string, { options: readonly string[]; data: boolean }> = {
  serve: { options: SERVE_OPTIONS, data: true },
  // --role is org create's so that it is refused in words of its own.
  'org create': { options: ['name', 'member', 'from', 'label', 'role', 'durable'], data: true },
  'key create': { options: ['label', 'role'], data: true },
  'key revoke': { options: [], data: true },
  'key list': { options: [], data: true },
  'member add': { options: ['durable'], data: true },
  'mirror add': { options: ['interval', 'timeout'], data: true },
  'mirror remove': { options: [], data: true },
  'mirror list': { options: [], data: true },
  'webhook add': { options: ['event', 'webhook-allow-private'], data: true },
  'webhook list': { options: [], data: true },
  'webhook remove': { options: [], data: true },
  upgrade: { options: ['durable'], data: true },
  export: { options: ['format', 'diagram'], data: true },
  check: { options: [], data: false },
  openapi: { options: [], data: false },
  'hook pre-receive': { options: [], data: false },
};

/** Refuses an option given to a command that does not take it; an unknown command is left to its own error. */
function checkOptionsOf(command: string, sub: string | undefined, values: Values): void {
  const name = sub !== undefined && `${command} ${sub}` in COMMAND_OPTIONS ? `${command} ${sub}` : command;
  const taken = COMMAND_OPTIONS[name];
  if (taken === undefined) return;
  for (const option of Object.keys(values)) {
    if (option === 'help' || (option === 'data' && taken.data) || taken.options.includes(option)) continue;
    throw new UsageError(`${name} does not take --${option} (c4store --help lists what each command takes)`);
  }
}

/**
 * Refuses an option of one value given twice: parseArgs keeps the last, so `--data A --data B`
 * (a line edited, an alias beside a typed option) ran on B unsaid. --member and --event add up.
 */
function refuseRepeatedOptions(tokens: ReadonlyArray<{ kind: string; name?: string; value?: string }>): void {
  const given = new Map<string, string | undefined>();
  for (const token of tokens) {
    if (token.kind !== 'option' || token.name === undefined) continue;
    const option = OPTIONS[token.name as keyof typeof OPTIONS] as { multiple?: boolean } | undefined;
    if (option?.multiple) continue;
    if (given.has(token.name)) {
      const values = token.value === undefined ? '' : ` ('${given.get(token.name)}', then '${token.value}')`;
      throw new UsageError(`--${token.name} is given more than once${values}: give it once`);
    }
    given.set(token.name, token.value);
  }
}

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function dataDir(values: Values): string {
  // An empty value resolves to the current folder, which is never what was meant.
  if (values.data === '') throw new UsageError(`--data must name a folder, not ''`);
  if (values.data === undefined && process.env.C4STORE_DATA === '') throw new UsageError(`$C4STORE_DATA must name a folder, not ''`);
  const data = resolve(values.data ?? process.env.C4STORE_DATA ?? 'data');
  // Said as such, not as the ENOTDIR of the first file read in it (a missing folder is made when needed).
  const link = lstatSync(data, { throwIfNoEntry: false });
  if (link?.isSymbolicLink() && !existsSync(data)) {
    throw new Error(`the data directory ${data} is a symbolic link to nothing (${resolve(dirname(data), readlinkSync(data))})`);
  }
  if (link !== undefined && !statSync(data).isDirectory()) throw new Error(`the data directory ${data} is not a folder`);
  return data;
}

function durable(values: Values): boolean {
  if (values.durable) return true;
  const text = process.env.C4STORE_DURABLE;
  if (text === undefined || text === '' || text === '0') return false;
  // 'true' or 'yes' was read as not durable: a promise of fsync silently not kept.
  if (text !== '1') throw new UsageError(`$C4STORE_DURABLE must be 1 (fsync every write) or 0, not '${text}'`);
  return true;
}

/**
 * Numbers are written in decimal digits: Number() also reads '' and ' ' as 0, '0x50' as 80 and
 * '1e3' as 1000, so an empty $PORT served on a random port and an empty --pack-every never packed.
 */
const WHOLE_NUMBER = /^\d+$/;
const DECIMAL_NUMBER = /^\d+(?:\.\d+)?$/;

/** A whole number written in digits, or NaN. */
function wholeNumber(text: string): number {
  return WHOLE_NUMBER.test(text) ? Number(text) : Number.NaN;
}

/** A number of seconds a timer can wait (digits, an optional fraction, at most LONGEST_TIMER_SECONDS), or NaN. */
function timerSeconds(text: string): number {
  const n = DECIMAL_NUMBER.test(text) ? Number(text) : Number.NaN;
  return n <= LONGEST_TIMER_SECONDS ? n : Number.NaN;
}

/** A positive whole number option, or undefined when it is not given. */
function count(
  values: Values,
  name: 'reads-per-minute' | 'writes-per-minute' | 'max-connections' | 'max-connections-per-address',
): number | undefined {
  const text = values[name];
  if (text === undefined) return undefined;
  const value = wholeNumber(text);
  if (!Number.isSafeInteger(value) || value < 1) throw new UsageError(`invalid --${name} '${text}': a whole number of at least 1`);
  return value;
}

function positionals(args: string[], count: number, usage: string): string[] {
  if (args.length !== count) throw new UsageError(`usage: c4store ${usage}`);
  return args;
}

/**
 * The organization with its first key, written before the organization appears under its slug:
 * a create stopped at any point leaves a whole organization or none. One refused after the key
 * was written (the slug taken meanwhile by another create) revokes that key, which could open nothing.
 */
async function createOrganization(
  orgs: Orgs,
  keys: KeyStore,
  slug: string,
  options: Omit<CreateOrgOptions, 'beforeAppearing'>,
  label: string,
): ReturnType<KeyStore['create']> {
  let made: Awaited<ReturnType<KeyStore['create']>> | undefined;
  try {
    await orgs.create(slug, {
      ...options,
      beforeAppearing: async (orgId) => {
        made = await keys.create(slug, { label, orgId });
      },
    });
  } catch (error) {
    // The refusal is what the user needs to read; a revocation that fails leaves a key bound to an identity no repository has.
    if (made) await keys.revoke(slug, made.record.id).catch(() => undefined);
    throw error;
  }
  return made!;
}

/** A member is an e-mail address (USERLIST values name members by it): `org create --member` and `member add` alike. */
/** A domain of dot-separated labels (letters, digits, inner hyphens; any script), at least two of them. */
const MAIL_DOMAIN = /^(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?\.)+[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?$/u;

function checkEmail(email: string): void {
  const at = email.lastIndexOf('@');
  // No control or format character either: a terminal escape or a right-to-left override would reach every terminal listing members.
  const valid = /^[^\s@<>"\p{Cc}\p{Cf}]+@[^\s@<>"\p{Cc}\p{Cf}]+$/u.test(email) && MAIL_DOMAIN.test(email.slice(at + 1));
  if (!valid) throw new UsageError(`'${shownEscaped(email)}' is not an e-mail address`);
}

/** Text from the command line as it may be echoed: control and format characters as \u escapes. */
function shownEscaped(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}]/gu, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`);
}

function defaultLimits(): string {
  return (Object.keys(LIMIT_OPTIONS) as Array<keyof Limits>).map((k) => `--${LIMIT_OPTIONS[k]} ${DEFAULT_LIMITS[k]}`).join(', ');
}

/** The --max-* options given, each a whole number of at least 1. */
function limitsOf(values: Values): Partial<Limits> {
  const limits: Partial<Limits> = {};
  for (const [limit, name] of Object.entries(LIMIT_OPTIONS) as Array<[keyof Limits, string]>) {
    const text = (values as Record<string, unknown>)[name];
    if (text === undefined) continue;
    const n = wholeNumber(String(text));
    if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`invalid --${name} '${String(text)}': use a whole number of at least 1`);
    limits[limit] = n;
  }
  return limits;
}

/** A --*-timeout option in seconds, as milliseconds. */
function seconds(
  values: Values,
  name: 'layout-timeout' | 'write-timeout' | 'drain-delay' | 'shutdown-timeout',
  least: 'above' | 'from' = 'above',
): number | undefined {
  const text = values[name];
  if (text === undefined) return undefined;
  const n = timerSeconds(text);
  if (Number.isNaN(n) || (least === 'above' && n === 0)) {
    throw new UsageError(
      `invalid --${name} '${text}': use a number of seconds ${least === 'above' ? 'above' : 'from'} 0, at most ${LONGEST_TIMER_SECONDS}`,
    );
  }
  return n * 1000;
}

/** The token /metrics asks for; a token on the command line shows in `ps`, the environment does not. */
function metricsToken(values: Values): string | undefined {
  const token = values['metrics-token'] ?? process.env.C4STORE_METRICS_TOKEN;
  const source = values['metrics-token'] !== undefined ? '--metrics-token' : '$C4STORE_METRICS_TOKEN';
  if (token !== undefined && token.length < 16) throw new UsageError(`${source} must be at least 16 characters`);
  return token;
}

async function serve(values: Values): Promise<void> {
  const data = dataDir(values);
  const [portSource, portText] = values.port !== undefined ? ['--port', values.port] : ['$PORT', process.env.PORT ?? '8080'];
  const port = wholeNumber(portText);
  if (!(port <= 65535)) throw new UsageError(`invalid ${portSource} '${portText}': a whole number from 0 to 65535`);
  // Node reads an empty host as every interface: `--host "$HOST"` with HOST unset would open the server to the network.
  if (values.host !== undefined && values.host.trim() === '') {
    throw new UsageError(`--host must name an address to listen on, such as 127.0.0.1 or 0.0.0.0, not '${values.host}'`);
  }
  // Every diagram's, share link's and sign-in's address starts with it: a web address or nothing.
  const publicUrl = values['public-url'];
  if (publicUrl !== undefined && !/^https?:\/\/[^/\s?#]+(?:\/\S*)?$/i.test(publicUrl)) {
    throw new UsageError(
      `--public-url must be the http(s) address clients reach the server at, such as https://c4.example.com, not '${publicUrl}'`,
    );
  }
  const packEvery = values['pack-every'] === undefined ? undefined : wholeNumber(values['pack-every']);
  if (packEvery !== undefined && !Number.isSafeInteger(packEvery)) {
    throw new UsageError(`--pack-every must be a whole number of commits (0: never), not '${values['pack-every']}'`);
  }
  // Every option is read before anything is made: a refused one must not leave a demo
  // organization behind whose key, shown only by the start that made it, was never shown.
  const settings = {
    dataDir: data,
    port,
    host: values.host,
    publicUrl,
    durable: durable(values),
    packEvery,
    limits: limitsOf(values),
    readsPerMinute: count(values, 'reads-per-minute'),
    writesPerMinute: count(values, 'writes-per-minute'),
    maxConnections: count(values, 'max-connections'),
    maxConnectionsPerAddress: count(values, 'max-connections-per-address'),
    layoutTimeout: seconds(values, 'layout-timeout'),
    writeTimeout: seconds(values, 'write-timeout'),
    metricsToken: metricsToken(values),
    drain: { delayMs: seconds(values, 'drain-delay', 'from'), timeoutMs: seconds(values, 'shutdown-timeout', 'from') },
    webhookAllowPrivate: values['webhook-allow-private'],
  };
  await checkWritable(data);
  const orgs = new Orgs(data, { durable: settings.durable });
  let demoKey: string | undefined;
  if (values.demo && (await orgs.list()).length === 0) {
    demoKey = (
      await createOrganization(orgs, new KeyStore(data), 'demo', { from: join(PACKAGE_ROOT, 'sample-repo'), author: CLI_AUTHOR }, 'demo')
    ).key;
  }
  // Before serving: repositories from before sharding move to the sharded layout (one commit each).
  for (const slug of await orgs.list()) {
    try {
      const upgrade = await orgs.get(slug).upgradeLayout(CLI_AUTHOR);
      if (upgrade.moved > 0) console.log(describeUpgrade(slug, upgrade));
    } catch (err) {
      console.error(`'${slug}' stays in its layout for now: ${detailedMessage(err)}`);
    }
  }
  const starting = startServer(settings);
  // The demo key exists only in this process: a start that fails (a busy port) still shows it,
  // or the next start, finding 'demo' made, could not.
  const server = await starting.catch((err: NodeJS.ErrnoException) => {
    if (demoKey) console.log(`created organization 'demo' from sample-repo/ in ${data}; its API key (shown once):\n${demoKey}`);
    if (err.code === 'EADDRINUSE') throw new Error(`port ${port} is in use: start on another one with --port N (npm start -- --port N)`);
    if (err.code === 'ENOTFOUND' || err.code === 'EADDRNOTAVAIL' || err.code === 'EAI_AGAIN') {
      throw new Error(`cannot listen on --host ${values.host}: it is no address of this machine (${err.code})`);
    }
    throw err;
  });
  if (demoKey) {
    console.log(`created organization 'demo' from sample-repo/ in ${data}; its API key (shown once):\n${demoKey}`);
    console.log(`try: curl -H 'Authorization: Bearer ${demoKey}' ${server.url}/api/external/component`);
  } else if (values.demo) {
    console.log(`serving the organizations in ${data}; a new key: node dist/cli.js key create <slug> --data ${data}`);
  }
  const viewer = (values['public-url'] ?? server.url).replace(/\/+$/, '');
  console.log(`viewer: ${viewer}/ (sign in with an API key of the organization)`);
  console.log(`listening on ${server.url}`);
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    // A second signal while draining: the operator wants out now.
    if (stopping) process.exit(1);
    stopping = true;
    console.log(`${signal}: draining (/healthz answers 503), then stopping`);
    void server
      .shutdown(signal === 'SIGINT' ? { delayMs: 0 } : {})
      .then((cutOff) => {
        console.log(
          cutOff === 0 ? 'stopped: every request in flight was answered' : `stopped: ${cutOff} request(s) cut off at the timeout`,
        );
        process.exit(0);
      })
      .catch((err: Error) => {
        console.error(`stopping failed: ${err.message}`);
        process.exit(1);
      });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/**
 * serve writes its keys, locks and commits into the data directory: one it cannot write (a
 * read-only mount, another user's folder) is refused at start, rather than served with /healthz
 * saying ok and every write answering 500.
 */
async function checkWritable(data: string): Promise<void> {
  const probe = join(data, `.c4store-write-check-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await mkdir(data, { recursive: true });
    await writeFile(probe, '');
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException;
    throw new Error(`the data directory ${data} cannot be written (${code ?? message}): serve writes its keys, locks and commits there`);
  }
  await rm(probe, { force: true });
}

function describeUpgrade(slug: string, { commit, moved }: { commit: string; moved: number }): string {
  return moved === 0
    ? `'${slug}' already uses the sharded layout (commit ${commit})`
    : `moved ${moved} files of '${slug}' to the sharded layout in commit ${commit}`;
}

async function exportOrg(orgs: Orgs, slug: string, values: Values): Promise<void> {
  const format = values.format ?? '';
  if (!isExportFormat(format)) throw new UsageError(`--format must be one of ${Object.keys(EXPORT_FORMATS).join(', ')}`);
  const { model } = await orgs.get(slug).head();
  const diagram = values.diagram === undefined ? undefined : findDiagram(model, values.diagram);
  if (values.diagram !== undefined && diagram === undefined) throw new Error(`Diagram with id '${values.diagram}' does not exist.`);
  process.stdout.write(exportModel(format, model, diagram));
}

/** A webhook made from the command line: the same checks as `POST /api/external/webhooks`. */
async function addWebhook(orgs: Orgs, slug: string, url: string, events: string[] | undefined, allowPrivate: boolean) {
  const unknown = (events ?? []).filter((e) => !(EVENT_TYPES as readonly string[]).includes(e));
  if (unknown.length > 0) throw new UsageError(`unknown event type '${unknown[0]}': use ${EVENT_TYPES.join(', ')}`);
  const checked = await checkTargetUrl(url, allowPrivate);
  const org = orgs.get(slug);
  const tip = await org.repo.readHead();
  if (tip === null) throw new Error(`organization '${slug}' has no main branch`);
  const types = events === undefined ? [...EVENT_TYPES] : ([...new Set(events)] as EventType[]);
  // Draft events from now on, as through the API.
  const { states } = await readDraftStates(org.repo.gitdir);
  return new WebhookStore(orgs.dataDir).create({ org: slug, orgId: org.identity, url: checked, events: types }, tip, states);
}

async function check(args: string[]): Promise<void> {
  if (args.length > 1) throw new UsageError('usage: c4store check [DIR]');
  const dir = resolve(args[0] ?? '.');
  if (!existsSync(dir)) throw new Error(`${dir}: no such folder`);
  if (!statSync(dir).isDirectory()) throw new Error(`${dir}: not a folder (check reads a folder such as a clone)`);
  const { files, problems } = await checkDirectory(dir, (line) => console.error(line));
  for (const p of problems) console.log(`${p.file}:${p.line}: ${p.message}`);
  console.error(
    `${files} files, ${problems.length === 0 ? 'no problems' : `${problems.length} problem${problems.length === 1 ? '' : 's'}`}`,
  );
  if (problems.length > 0) process.exitCode = 1;
}

async function run(argv: string[]): Promise<void> {
  const {
    values,
    positionals: args,
    tokens,
  } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true, tokens: true });
  refuseRepeatedOptions(tokens);
  const [command, sub, ...rest] = args;
  if (values.help || command === undefined || command === 'help') {
    console.log(USAGE);
    return;
  }
  checkOptionsOf(command, sub, values);
  if (command === 'check') return check(args.slice(1));
  if (command === 'openapi') {
    process.stdout.write(openapiJson());
    return;
  }
  // Git runs it in the repository, in the server's environment: it needs no data directory.
  if (command === 'hook' && sub === 'pre-receive' && rest.length === 0) {
    // Run by git in the repository (src/push/hook.ts): refuse the push by exiting non-zero.
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    const gitdir = resolve(process.env.GIT_DIR ?? '.');
    const options = pushOptions(process.env);
    if (options.length > 0) console.error(`c4store: push options are not used here and were ignored: ${options.join(', ')}`);
    const problems = await checkPush(
      gitdir,
      parseRefUpdates(Buffer.concat(chunks).toString('utf8')),
      quarantineEnvironment(),
      pushLimits(),
    );
    for (const problem of problems) console.error(`c4store: ${problem}`);
    if (problems.length > 0) process.exit(1);
    return;
  }
  const data = dataDir(values);
  const orgs = new Orgs(data, { durable: durable(values) });
  if (command === 'upgrade') {
    const [slug] = positionals(args.slice(1), 1, 'upgrade <slug> [--data DIR]');
    if (!orgs.exists(slug)) throw new Error(`organization '${slug}' does not exist in ${data}`);
    const org = orgs.get(slug);
    // Two commits of their own: the move to the sharded layout (renames only, so git log
    // --follow sees through it), then every file as the service writes it today.
    console.log(describeUpgrade(slug, await org.upgradeLayout(CLI_AUTHOR)));
    const { snapshot } = await org.write(
      {
        author: CLI_AUTHOR,
        title: 'c4store upgrade',
        spoken: () => 'Rewrote every file as the service writes it today, with its editor schema line',
        options: { apiContext: apiContextOf(new Date()), newId: () => newId(), layout: 'keep' },
        mayRewriteUnchanged: true,
      },
      rewriteEveryFile,
    );
    console.log(`'${slug}' has its editor schemas in ${SCHEMA_DIR}/ and a schema line in every file (commit ${snapshot.commit})`);
    return;
  }
  if (command === 'export') {
    const [slug] = positionals(args.slice(1), 1, 'export <slug> --format structurizr|plantuml|mermaid|likec4 [--diagram ID]');
    if (!orgs.exists(slug)) throw new Error(`organization '${slug}' does not exist in ${data}`);
    return exportOrg(orgs, slug, values);
  }
  const keys = new KeyStore(data);
  const requireOrg = (slug: string) => {
    if (!orgs.exists(slug)) throw new Error(`organization '${slug}' does not exist in ${data}`);
  };
  switch (`${command} ${sub ?? ''}`.trim()) {
    case 'serve':
      if (sub !== undefined) throw new UsageError('usage: c4store serve [options]');
      return serve(values);
    case 'org create': {
      const [slug] = positionals(rest, 1, 'org create <slug> [--name NAME] [--member EMAIL]... [--from DIR]');
      if (values.from && !existsSync(values.from)) throw new Error(`--from ${values.from}: no such folder`);
      if (values.from && !statSync(values.from).isDirectory()) throw new Error(`--from ${values.from}: not a folder`);
      if (values.name !== undefined && values.name.trim() === '') throw new UsageError('--name must not be empty');
      for (const email of values.member ?? []) checkEmail(email);
      if (values.role !== undefined)
        throw new UsageError('org create makes an editor key; a reader key is made with key create --role reader');
      // What the key needs is checked before the organization is made: a refusal makes nothing.
      checkKeyLabel(values.label ?? 'admin');
      await keys.readable();
      const { key, record } = await createOrganization(
        orgs,
        keys,
        slug,
        { name: values.name, members: values.member, from: values.from, author: CLI_AUTHOR },
        values.label ?? 'admin',
      );
      console.log(`created organization '${slug}' in ${orgs.gitdir(slug)}`);
      console.log(`API key ${record.id} (${record.label}, ${record.role}), shown once:`);
      console.log(key);
      return;
    }
    case 'key create': {
      const [slug] = positionals(rest, 1, 'key create <slug> [--label LABEL] [--role editor|reader]');
      requireOrg(slug);
      const role = (values.role ?? 'editor') as Role;
      if (role !== 'editor' && role !== 'reader') throw new UsageError(`--role must be editor or reader, not '${values.role}'`);
      const { key, record } = await keys.create(slug, { label: values.label, role });
      console.log(`API key ${record.id} (${record.label}, ${record.role}) for '${slug}', shown once:`);
      console.log(key);
      return;
    }
    case 'key revoke': {
      const [slug, keyId] = positionals(rest, 2, 'key revoke <slug> <key-id>');
      const record = await keys.revoke(slug, keyId);
      console.log(`revoked key ${record.id} (${record.label}) of '${slug}'`);
      return;
    }
    case 'key list': {
      const [slug] = positionals(rest, 1, 'key list <slug>');
      requireOrg(slug);
      const { identity } = orgs.get(slug);
      for (const k of await keys.list(slug)) {
        // A key opens only the organization it was made for (its orgId), not one made anew under the slug.
        const status = k.revoked
          ? `revoked ${k.revoked}`
          : k.orgId !== undefined && k.orgId !== identity
            ? 'opens nothing: made for an earlier organization under this slug'
            : 'active';
        console.log([k.id, k.label, k.role, k.created, status].join('\t'));
      }
      return;
    }
    case 'upgrade': {
      throw new UsageError('usage: c4store upgrade <slug> [--data DIR]');
    }
    case 'member add': {
      const [slug, email] = positionals(rest, 2, 'member add <slug> <email>');
      requireOrg(slug);
      checkEmail(email);
      const org = orgs.get(slug);
      const { snapshot } = await org.write(
        {
          author: CLI_AUTHOR,
          title: `c4store member add ${email}`,
          spoken: () => `Added ${email} as a member`,
          options: { apiContext: apiContextOf(new Date()), newId: () => newId(), layout: 'keep' },
        },
        (draft) => {
          const { members } = draft.base.organization;
          // One address, one member, whatever its case (USERLIST values match members so).
          const known = memberCalled(members, email);
          if (known !== undefined && known !== email)
            throw new Error(`'${slug}' already has the member ${known}, which ${email} is in another case.`);
          if (known === undefined) putOrganization(draft, { ...draft.base.organization, members: [...members, email] });
        },
      );
      console.log(`${email} is a member of '${slug}' (commit ${snapshot.commit})`);
      return;
    }
    case 'mirror add': {
      const [slug, url] = positionals(rest, 2, 'mirror add <slug> <url> [--interval SECONDS] [--timeout SECONDS]');
      requireOrg(slug);
      checkMirrorUrl(url);
      const interval = values.interval === undefined ? DEFAULT_MIRROR_INTERVAL : timerSeconds(values.interval);
      if (Number.isNaN(interval))
        throw new UsageError(`--interval must be a number of seconds, at most ${LONGEST_TIMER_SECONDS}, not '${values.interval}'`);
      const timeout = values.timeout === undefined ? DEFAULT_MIRROR_TIMEOUT : timerSeconds(values.timeout);
      if (Number.isNaN(timeout) || timeout === 0)
        throw new UsageError(`--timeout must be a number of seconds above 0, at most ${LONGEST_TIMER_SECONDS}, not '${values.timeout}'`);
      // One mirror per address as `mirror list` shows it: the same address with other credentials
      // (a rotated token) replaces the mirror; beside it, the old token's pushes failed forever on
      // a line `mirror list` printed exactly as the new one's.
      const sameMirror = (m: { org: string; url: string }) => m.org === slug && (m.url === url || redactUrl(m.url) === redactUrl(url));
      let replaced = false;
      await updateMirrors(data, (mirrors) => {
        replaced = mirrors.some(sameMirror);
        return [...mirrors.filter((m) => !sameMirror(m)), { org: slug, url, interval, timeout }];
      });
      console.log(
        `'${slug}' is mirrored to ${redactUrl(url)} (at most one push every ${interval} s${replaced ? '; it replaces the mirror of that address' : ''}); running servers start within a second`,
      );
      return;
    }
    case 'mirror remove': {
      const [slug, url] = positionals(rest, 2, 'mirror remove <slug> <url>');
      const matches = (m: { org: string; url: string }) => m.org === slug && (m.url === url || redactUrl(m.url) === url);
      // Refused before the file is locked or written: a refusal changes nothing, not even a missing data directory.
      if (!(await readMirrors(data)).some(matches)) throw new Error(`'${slug}' has no mirror ${redactUrl(url)}`);
      let found = false;
      await updateMirrors(data, (mirrors) =>
        mirrors.filter((m) => {
          const match = matches(m);
          found ||= match;
          return !match;
        }),
      );
      if (!found) throw new Error(`'${slug}' has no mirror ${redactUrl(url)}`);
      console.log(`'${slug}' is no longer mirrored to ${redactUrl(url)}`);
      return;
    }
    case 'mirror list': {
      if (rest.length > 1) throw new UsageError('usage: c4store mirror list [<slug>]');
      if (rest[0] !== undefined) requireOrg(rest[0]);
      const state = await readMirrorState(data);
      for (const mirror of await readMirrors(data)) {
        if (rest[0] !== undefined && mirror.org !== rest[0]) continue;
        const status = state.find((m) => m.org === mirror.org && m.url === redactUrl(mirror.url));
        const progress = status
          ? `last pushed ${status.lastPushed?.slice(0, 12) ?? 'never'}${status.lastPushedAt ? ` at ${status.lastPushedAt}` : ''}` +
            (status.lastError ? `; last error (${status.failures} in a row): ${status.lastError}` : '')
          : 'not pushed yet by a running server';
        console.log([mirror.org, redactUrl(mirror.url), `every ${mirror.interval} s`, progress].join('\t'));
      }
      return;
    }
    case 'webhook add': {
      const [slug, url] = positionals(rest, 2, 'webhook add <slug> <url> [--event TYPE]... [--webhook-allow-private]');
      requireOrg(slug);
      const subscription = await addWebhook(orgs, slug, url, values.event, values['webhook-allow-private'] ?? false);
      console.log(`webhook ${subscription.id} of '${slug}' sends ${subscription.events.join(', ')} to ${redactUrl(subscription.url)}`);
      console.log('its signing secret, shown once:');
      console.log(subscription.secret);
      return;
    }
    case 'webhook list': {
      const [slug] = positionals(rest, 1, 'webhook list <slug>');
      requireOrg(slug);
      const { subscriptions, damaged } = await new WebhookStore(data).overview(slug, orgs.get(slug).identity);
      for (const { subscription: w, state } of subscriptions) {
        const status = state.disabled ? `disabled: ${state.disabled.reason}` : `delivered up to ${state.cursor.slice(0, 12)}`;
        console.log([w.id, redactUrl(w.url), w.events.join(','), w.created, status].join('\t'));
      }
      for (const error of damaged) console.log([error.id, '', '', '', `damaged: ${error.message}`].join('\t'));
      return;
    }
    case 'webhook remove': {
      const [slug, id] = positionals(rest, 2, 'webhook remove <slug> <webhook-id>');
      if (!(await new WebhookStore(data).remove(slug, id))) throw new Error(`'${slug}' has no webhook ${id}`);
      console.log(`removed webhook ${id} of '${slug}'`);
      return;
    }
    default:
      throw new UsageError(`unknown command '${args.join(' ')}'\n\n${USAGE}`);
  }
}

run(process.argv.slice(2)).catch((err: unknown) => {
  // Node's own errors have a string code; a failed git command's is its exit status.
  const code = (err as { code?: unknown }).code;
  const usage = err instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'));
  console.error(`c4store: ${detailedMessage(err)}`);
  process.exit(usage ? 2 : 1);
});
