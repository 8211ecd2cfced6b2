/**
 * What the crash and several-process torture runs share: server processes, an HTTP client
 * that measures and never throws, git inspection, and small statistics.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { tryDirectoryLock } from '../src/store/lock.js';
import { MAINTENANCE_LOCK, MAINTENANCE_LOCK_TIMING } from '../src/store/maintenance.js';
import { CLI, cli, lastLine, serveArguments, untilListening } from '../test/support/process.js';

export { CLI };

/** proper-lockfile's `stale` in src/store/lock.ts: a dead process's lock is taken over after this. */
export const LOCK_STALE_MS = 3000;

// ---------------------------------------------------------------------------
// Server processes

export interface ServerProcessOptions {
  /** Extra arguments after `serve --data D --port 0`, e.g. `--durable`. */
  args?: string[];
  /** Extra environment, e.g. `{ C4STORE_DURABLE: '1' }`. */
  env?: Record<string, string>;
  /** Arguments for node itself, before the script (e.g. `--import=<preload>`). */
  nodeArgs?: string[];
}

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** Lines that look like trouble (errors, compromised locks), and the last lines of output. */
  troubles: string[];
  tail: string[];
  /** Resolves when the process has exited, whatever the reason. */
  exited: Promise<void>;
  isRunning(): boolean;
  /** Sends the signal and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

const TROUBLE = /error|compromised|warn|unhandled|exception/i;

/** `node dist/cli.js serve --data D --port 0`, resolved once it prints `listening on <url>`. */
export async function startServerProcess(dataDir: string, options: ServerProcessOptions = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), CLI, ...serveArguments(dataDir, options.args ?? [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
  });
  const troubles: string[] = [];
  const tail: string[] = [];
  const exited = once(child, 'exit').then(() => undefined);
  const keep = (line: string) => {
    if (line === '') return;
    tail.push(line);
    if (tail.length > 40) tail.shift();
    // Request lines (JSON at level info) are counted by the clients, not read for trouble.
    if (TROUBLE.test(line) && !line.startsWith('{"level":"info"') && troubles.length < 200) troubles.push(line);
  };
  const url = await untilListening(
    child,
    (line, stream) => {
      keep(line);
      if (stream === 'stderr' && troubles.length < 200 && !TROUBLE.test(line) && line.trim() !== '') troubles.push(line);
    },
    () => tail.join('\n'),
  );
  const isRunning = () => child.exitCode === null && child.signalCode === null;
  return {
    url,
    child,
    troubles,
    tail,
    exited,
    isRunning,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (!isRunning()) return;
      child.kill(signal);
      await exited;
    },
  };
}

/** A scratch data directory. */
export function scratchDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `c4store-${prefix}-`));
}

/** `c4store org create <slug>` in `dataDir`; returns the organization's editor key. */
export async function createOrg(dataDir: string, slug: string): Promise<string> {
  return lastLine(await cli('org', 'create', slug, '--data', dataDir, '--member', 'ada@example.com'));
}

export function gitdirOf(dataDir: string, slug: string): string {
  return join(dataDir, 'orgs', `${slug}.git`);
}

/** Whether the dead process left its locks behind: proper-lockfile's file, the ref lock. */
export function leftLocks(gitdir: string): { writeLock: boolean; refLock: boolean; writeLockMtime: number | null } {
  const writeLock = statSync(join(gitdir, 'c4store.lock'), { throwIfNoEntry: false });
  return {
    writeLock: writeLock !== undefined,
    refLock: existsSync(join(gitdir, 'refs', 'heads', 'main.lock')),
    writeLockMtime: writeLock?.mtimeMs ?? null,
  };
}

// ---------------------------------------------------------------------------
// HTTP

export interface Answer {
  /** 0: no answer (connection refused or cut, or timed out). */
  status: number;
  etag: string | undefined;
  body: any;
  text: string;
  /** Why there was no answer. */
  error?: string;
  ms: number;
  sentAt: number;
  answeredAt: number;
}

export const REQUEST_TIMEOUT_MS = 60_000;

/** One request; never throws. JSON in, JSON out. */
export async function call(
  url: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const sentAt = Date.now();
  const started = performance.now();
  try {
    const response = await fetch(url + path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = text;
    }
    const etag = response.headers
      .get('etag')
      ?.replace(/^W\//, '')
      .replace(/^"(.*)"$/, '$1');
    return { status: response.status, etag, body: parsed, text, ms: performance.now() - started, sentAt, answeredAt: Date.now() };
  } catch (error) {
    const e = error as Error & { cause?: { code?: string; message?: string } };
    return {
      status: 0,
      etag: undefined,
      body: undefined,
      text: '',
      error: e.cause?.code ?? e.cause?.message ?? e.name ?? e.message,
      ms: performance.now() - started,
      sentAt,
      answeredAt: Date.now(),
    };
  }
}

// ---------------------------------------------------------------------------
// Resources compared as the API returns them

export type Kind = 'tag' | 'attribute' | 'component' | 'diagram';

/**
 * A resource in the form in which two answers must be equal: a diagram's `url` carries the
 * listening address (a new port after each restart), and its tags are full tag objects that
 * change when the tag does, so they are compared by id.
 */
export function normalize(kind: Kind, resource: any): any {
  if (kind !== 'diagram' || resource === null || typeof resource !== 'object') return resource;
  const { url: _url, tags, ...rest } = resource;
  return { ...rest, tags: Array.isArray(tags) ? tags.map((t: { id: string }) => t.id) : tags };
}

export function sameResource(kind: Kind, a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(normalize(kind, a), normalize(kind, b));
}

/** A short description of how two resources differ, for a problem report. */
export function difference(kind: Kind, expected: any, actual: any): string {
  const e = normalize(kind, expected);
  const a = normalize(kind, actual);
  if (a === undefined) return 'missing';
  const fields = [...new Set([...Object.keys(e ?? {}), ...Object.keys(a ?? {})])].filter((f) => !isDeepStrictEqual(e?.[f], a?.[f]));
  return fields.map((f) => `${f}: expected ${short(e?.[f])}, got ${short(a?.[f])}`).join('; ');
}

function short(value: unknown): string {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

// ---------------------------------------------------------------------------
// git

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function gitRaw(gitdir: string, args: string[], input?: string): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = execFile('git', ['--git-dir', gitdir, ...args], { maxBuffer: 1 << 30, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : -1) : 0;
      if (error && code === -1) reject(error);
      else resolve({ code, stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

export async function git(gitdir: string, ...args: string[]): Promise<string> {
  const result = await gitRaw(gitdir, args);
  if (result.code !== 0) throw new Error(`git ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

/**
 * `git fsck --full --strict` of the repository as its writers left it: clean means exit 0 and
 * nothing reported but dangling objects. Not beside a repack, which prunes loose objects between
 * fsck's listing and its reading of them: it holds the repository's maintenance lock (running
 * servers skip their turn meanwhile) and waits for the git a SIGKILLed server left packing,
 * which outlives it (at nice 19, for seconds).
 */
export async function fsck(gitdir: string, options: { serversRunning?: boolean } = {}): Promise<{ clean: boolean; report: string }> {
  // With no server running, a lock left is a killed one's: it would hold fsck up until it is stale.
  const release = options.serversRunning === false ? async () => {} : await maintenanceLock(gitdir);
  try {
    await untilNoGitWorksOn(gitdir);
    const result = await gitRaw(gitdir, ['fsck', '--full', '--strict', '--no-dangling', '--no-progress']);
    const report = `${result.stdout}${result.stderr}`.trim();
    return { clean: result.code === 0 && report === '', report };
  } finally {
    await release();
  }
}

async function maintenanceLock(gitdir: string): Promise<() => Promise<void>> {
  for (let waited = 0; ; waited += 50) {
    const release = await tryDirectoryLock(gitdir, MAINTENANCE_LOCK, MAINTENANCE_LOCK_TIMING, (line) => console.error(line));
    if (release) return release;
    if (waited > 120_000) throw new Error(`${gitdir}: its maintenance lock was not free for two minutes`);
    await sleep(50);
  }
}

/** Until no git but a reader (cat-file) has `gitdir` among its arguments, for at most a minute. */
async function untilNoGitWorksOn(gitdir: string): Promise<void> {
  const working = () =>
    readdirSync('/proc').some((pid) => {
      if (!/^\d+$/.test(pid)) return false;
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return args.includes(gitdir) && !args.includes('cat-file');
      } catch {
        return false; // ended while we looked
      }
    });
  for (let waited = 0; working() && waited < 60_000; waited += 50) await sleep(50);
}

export interface CommitInfo {
  oid: string;
  parents: string[];
  message: string;
  /** The `Api-Context:` trailers of the message. */
  contexts: string[];
  /** `A`/`M`/`D` and path of each file the commit changed against its parent. */
  files: Array<{ status: string; path: string }>;
}

/** The commits of `range` (e.g. `a..main`), oldest first, with their changed files. */
export async function commitsOf(gitdir: string, range: string): Promise<CommitInfo[]> {
  const out = await git(gitdir, 'log', '--reverse', '--no-renames', '--name-status', '--format=%x1e%H %P%n%B%x1f', range, '--');
  const commits: CommitInfo[] = [];
  for (const chunk of out.split('\x1e').slice(1)) {
    const [head, rest = ''] = splitOnce(chunk, '\x1f');
    const firstNewline = head.indexOf('\n');
    const [oid = '', ...parents] = head.slice(0, firstNewline).trim().split(' ').filter(Boolean);
    const message = head.slice(firstNewline + 1);
    const contexts = [...message.matchAll(/^Api-Context: (.*)$/gm)].map((m) => m[1]!);
    const files = rest
      .split('\n')
      .filter((line) => /^[A-Z]\t/.test(line))
      .map((line) => ({ status: line[0]!, path: line.slice(2) }));
    commits.push({ oid, parents, message, contexts, files });
  }
  return commits;
}

function splitOnce(text: string, separator: string): [string, string] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, ''] : [text.slice(0, at), text.slice(at + separator.length)];
}

/** The contents of `<commit>:<path>` specs via one `git cat-file --batch`; null when missing. */
export async function readBlobs(gitdir: string, specs: string[]): Promise<Array<string | null>> {
  if (specs.length === 0) return [];
  const child = spawn('git', ['--git-dir', gitdir, 'cat-file', '--batch'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.stdin.end(specs.map((s) => `${s}\n`).join(''));
  await once(child, 'close');
  const out = Buffer.concat(chunks);
  const results: Array<string | null> = [];
  let offset = 0;
  for (let i = 0; i < specs.length; i++) {
    const lineEnd = out.indexOf(0x0a, offset);
    const header = out.toString('utf8', offset, lineEnd);
    offset = lineEnd + 1;
    if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
      results.push(null);
      continue;
    }
    const size = Number(header.split(' ')[2]);
    results.push(out.toString('utf8', offset, offset + size));
    offset += size + 1;
  }
  return results;
}

// ---------------------------------------------------------------------------
// Statistics and output

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function round(value: number, digits = 0): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function randomInt(min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min + 1));
}

export function pick<T>(items: readonly T[]): T {
  return items[Math.floor(Math.random() * items.length)]!;
}

/** `n` distinct items of `items`, in random order. */
export function sample<T>(items: readonly T[], n: number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, n);
}

/** Keeps the first `limit` problems and counts the rest. */
export class Problems {
  readonly list: string[] = [];
  count = 0;

  constructor(private readonly limit = 200) {}

  add(text: string): void {
    this.count++;
    if (this.list.length < this.limit) this.list.push(text);
  }
}
