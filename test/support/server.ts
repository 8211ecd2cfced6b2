import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { undocumented } from './documented.js';
import { requestChecks, requestOutsideDocument } from './requests.js';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server.js';
import { Orgs } from '../../src/service/orgs.js';
import { KeyStore } from '../../src/store/keys.js';

export const run = promisify(execFile);

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON or YAML by its Content-Type. */
  body: any;
}

/**
 * What a refusal concerns (`attribute 'Team', element 0 'Mobile App'`), read from its
 * `C4store-Error-Context` header and decoded; undefined when the answer has none.
 */
export function errorContext(reply: Reply): string | undefined {
  const raw = reply.headers.get('c4store-error-context');
  return raw === null ? undefined : decodeURIComponent(raw);
}

export interface RequestOptions {
  body?: unknown;
  /** A raw body sent as is. */
  raw?: string | Buffer;
  headers?: Record<string, string>;
  /** Send the body as YAML and ask for YAML back. */
  yaml?: boolean;
  key?: string | null;
}

export const MEMBERS = ['ada@example.com', 'linus@example.com'];

/** A log line (one JSON object, src/http/middleware/log.ts) of an unexpected error. */
export function isErrorLine(line: string): boolean {
  try {
    const level = (JSON.parse(line) as { level?: unknown }).level;
    return level === 'error' || level === 'fatal';
  } catch {
    return true; // not the logger's: something wrote around it
  }
}

/** A real server over real HTTP on a temporary data directory with one organization. */
export class TestServer {
  private constructor(
    readonly dataDir: string,
    readonly server: RunningServer,
    readonly slug: string,
    readonly key: string,
    readonly readerKey: string,
    readonly logs: string[],
  ) {}

  /** `from`: a folder in the repository layout (sample-repo/) the organization starts from, as `org create --from`. */
  static async start(options: Partial<ServerOptions> & { slug?: string; from?: string } = {}): Promise<TestServer> {
    const dataDir = await mkdtemp(join(tmpdir(), 'c4store-test-'));
    const slug = options.slug ?? 'acme';
    const start = options.from ? { from: options.from, members: MEMBERS } : { name: 'Acme', members: MEMBERS };
    await new Orgs(dataDir).create(slug, { ...start, author: { name: 'test', email: 'test@test' } });
    const keys = new KeyStore(dataDir);
    const { key } = await keys.create(slug, { label: 'test pipeline' });
    const { key: readerKey } = await keys.create(slug, { label: 'viewer', role: 'reader' });
    const logs: string[] = [];
    const server = await startServer({ dataDir, port: 0, log: (line) => logs.push(line), ...options });
    return new TestServer(dataDir, server, slug, key, readerKey, logs);
  }

  get url(): string {
    return this.server.url;
  }

  get gitdir(): string {
    return join(this.dataDir, 'orgs', `${this.slug}.git`);
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = {};
    const key = options.key === undefined ? this.key : options.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let body: string | Buffer | undefined = options.raw;
    if (options.body !== undefined) {
      body = options.yaml ? YAML.stringify(options.body) : JSON.stringify(options.body);
    }
    if (body !== undefined) headers['content-type'] = options.yaml ? 'application/yaml' : 'application/json';
    if (options.yaml) headers.accept = 'application/yaml';
    Object.assign(headers, options.headers);
    const response = await fetch(this.url + path, { method, headers, body });
    const text = await response.text();
    const type = response.headers.get('content-type') ?? '';
    let parsed: unknown;
    if (text !== '') parsed = type.includes('yaml') ? YAML.parse(text) : type.includes('json') ? JSON.parse(text) : text;
    const mismatch =
      undocumented(method, path, response.status, type, parsed) ??
      (requestChecks.on ? requestOutsideDocument(method, path, response.status, options.body) : undefined);
    if (mismatch) throw new Error(mismatch);
    return { status: response.status, headers: response.headers, text, body: parsed };
  }

  get(path: string, options?: RequestOptions) {
    return this.request('GET', path, options);
  }

  post(path: string, body: unknown, options?: RequestOptions) {
    return this.request('POST', path, { ...options, body });
  }

  put(path: string, body: unknown, options?: RequestOptions) {
    return this.request('PUT', path, { ...options, body });
  }

  async git(...args: string[]): Promise<string> {
    const { stdout } = await run('git', ['--git-dir', this.gitdir, ...args]);
    return stdout;
  }

  async head(): Promise<string> {
    return (await this.git('rev-parse', 'refs/heads/main')).trim();
  }

  async commitCount(): Promise<number> {
    return Number((await this.git('rev-list', '--count', 'main')).trim());
  }

  /** Everything a refused write must leave as it was: the ref, the history and every list. */
  async state(): Promise<string> {
    const lists = await Promise.all(['tag', 'attribute', 'component', 'diagram'].map((k) => this.get(`/api/external/${k}`)));
    return JSON.stringify({ head: await this.head(), count: await this.commitCount(), lists: lists.map((l) => l.body) });
  }

  async close(): Promise<void> {
    await this.server.close();
    await rm(this.dataDir, { recursive: true, force: true });
  }
}

/** A viewer session of `key` at the server at `url`, as its sign-in page gives it: the cookie to send. */
export async function sessionCookie(url: string, key: string): Promise<string> {
  const answer = await fetch(`${url}/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url },
    body: new URLSearchParams({ key, next: '/' }),
  });
  if (answer.status !== 303) throw new Error(`sign-in answered ${answer.status}`);
  return answer.headers.get('set-cookie')!.split(';')[0]!;
}

/** Runs `run` against a fresh server of its own, closed afterwards whatever happens. */
export async function withServer(run: (s: TestServer) => Promise<void>): Promise<void> {
  const s = await TestServer.start();
  try {
    await run(s);
  } finally {
    await s.close();
  }
}
