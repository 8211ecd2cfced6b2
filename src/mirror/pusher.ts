import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { readRef } from '../store/refs.js';
import { GitCommandError, GitTimeoutError, runGit } from '../store/git-cli.js';
import { redactSecrets, redactUrl } from '../credentials.js';
import { type MirrorConfig, mirrorsSignature, readMirrors } from './config.js';
import { replaceFile } from '../store/durable-files.js';
import { SLUG_PATTERN } from '../store/org-identity.js';

/**
 * Pushes `main`, the drafts' branches and the version tags of each mirrored organization to
 * its remote after the service's commits: in the background, one push in flight per mirror carrying whatever
 * `main` is when it starts (so a burst of writes costs one push), at most one start per
 * `interval` seconds, and after a failure again with doubling waits up to five minutes. A
 * write never waits for a mirror, and a mirror that is down never fails a write.
 */

export interface MirrorStatus {
  org: string;
  url: string;
  interval: number;
  lastPushed: string | null;
  lastPushedAt: string | null;
  lastAttemptAt: string | null;
  lastError: string | null;
  failures: number;
  /** Commits of main not yet on the mirror (null before the first push of this process). */
  behind: number | null;
}

interface Mirror {
  config: MirrorConfig;
  status: MirrorStatus;
  dirty: boolean;
  inFlight: Promise<void> | undefined;
  timer: NodeJS.Timeout | undefined;
  lastStart: number;
  retryAt: number;
}

export const MIRROR_STATE_FILE_NAME = 'mirror-state.json';
const MIN_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 5 * 60_000;
const RELOAD_MS = 1000;

export class Mirrors {
  private readonly mirrors = new Map<string, Mirror>();
  private signature = '';
  private readonly reloadTimer: NodeJS.Timeout;
  private closed = false;
  /** Stops the pushes in flight when the server shuts down. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly dataDir: string,
    private readonly gitdirOf: (org: string) => string,
    private readonly log: (line: string) => void,
  ) {
    this.reloadTimer = setInterval(() => void this.tick(), RELOAD_MS);
    this.reloadTimer.unref();
  }

  /** Reads mirrors.yaml and catches every mirror up (pushes missed while the server was down). */
  async start(): Promise<void> {
    await this.reload();
  }

  afterCommit(org: string): void {
    for (const mirror of this.mirrors.values()) {
      if (mirror.config.org !== org) continue;
      mirror.dirty = true;
      this.schedule(mirror);
    }
  }

  /** Mirrors configured, those with commits still to push (or a push under way), those whose last push failed: metrics. */
  get backlog(): { mirrors: number; pending: number; failing: number } {
    let pending = 0;
    let failing = 0;
    for (const mirror of this.mirrors.values()) {
      if (mirror.dirty || mirror.inFlight !== undefined) pending++;
      if (mirror.status.failures > 0) failing++;
    }
    return { mirrors: this.mirrors.size, pending, failing };
  }

  async statusOf(org?: string): Promise<MirrorStatus[]> {
    const list = [...this.mirrors.values()].filter((m) => org === undefined || m.config.org === org);
    return Promise.all(list.map(async (mirror) => ({ ...mirror.status, behind: await this.behind(mirror) })));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.reloadTimer);
    for (const mirror of this.mirrors.values()) clearTimeout(mirror.timer);
    this.stopping.abort();
    await Promise.all([...this.mirrors.values()].map((m) => m.inFlight));
  }

  /** Once a second: a changed mirrors.yaml, and commits that reached main another way (a push). */
  private async tick(): Promise<void> {
    await this.reload();
    for (const mirror of this.mirrors.values()) {
      if (mirror.dirty || mirror.inFlight || this.closed) continue;
      const head = await readRef(this.gitdirOf(mirror.config.org), 'refs/heads/main').catch(() => null);
      if (head !== null && head !== mirror.status.lastPushed) {
        mirror.dirty = true;
        this.schedule(mirror);
      }
    }
  }

  private async reload(): Promise<void> {
    if (this.closed) return;
    const signature = mirrorsSignature(this.dataDir);
    if (signature === this.signature) return;
    this.signature = signature;
    const configs = await readMirrors(this.dataDir).catch((err: Error) => {
      // Its first line only: a YAML error goes on to quote the file, and the file holds tokens.
      this.log(`mirrors.yaml cannot be read: ${err.message.split('\n')[0]}`);
      return undefined;
    });
    if (!configs) return;
    // mirrors.yaml is written by hand too: an entry naming no organization's slug ('Acme', a path)
    // has no repository to push; asked for one, it threw in a timer and ended the server.
    const valid = configs.filter((config) => {
      if (SLUG_PATTERN.test(config.org)) return true;
      this.log(
        `mirrors.yaml: the mirror of ${JSON.stringify(config.org)} to ${redactUrl(config.url)} is left out: it names no organization (a slug is lowercase letters, digits and '-')`,
      );
      return false;
    });
    const wanted = new Set(valid.map(keyOf));
    for (const [key, mirror] of this.mirrors) {
      if (!wanted.has(key)) {
        clearTimeout(mirror.timer);
        this.mirrors.delete(key);
      }
    }
    for (const config of valid) {
      const existing = this.mirrors.get(keyOf(config));
      if (existing) {
        existing.config = config;
        continue;
      }
      const mirror: Mirror = {
        config,
        status: {
          org: config.org,
          url: redactUrl(config.url),
          interval: config.interval,
          lastPushed: null,
          lastPushedAt: null,
          lastAttemptAt: null,
          lastError: null,
          failures: 0,
          behind: null,
        },
        dirty: true,
        inFlight: undefined,
        timer: undefined,
        lastStart: 0,
        retryAt: 0,
      };
      this.mirrors.set(keyOf(config), mirror);
      this.schedule(mirror);
    }
  }

  private schedule(mirror: Mirror): void {
    if (this.closed || mirror.inFlight || mirror.timer) return;
    const now = Date.now();
    const wait = Math.max(0, mirror.lastStart + mirror.config.interval * 1000 - now, mirror.retryAt - now);
    mirror.timer = setTimeout(() => {
      mirror.timer = undefined;
      mirror.inFlight = this.push(mirror).finally(() => {
        mirror.inFlight = undefined;
        if (mirror.dirty && this.mirrors.get(keyOf(mirror.config)) === mirror) this.schedule(mirror);
      });
    }, wait);
    mirror.timer.unref();
  }

  private async push(mirror: Mirror): Promise<void> {
    const { org, url } = mirror.config;
    const gitdir = this.gitdirOf(org);
    mirror.lastStart = Date.now();
    mirror.dirty = false;
    mirror.status.lastAttemptAt = new Date().toISOString();
    const head = await readRef(gitdir, 'refs/heads/main').catch(() => null);
    if (head === null) return;
    try {
      // Drafts' branches too (forced: a draft may be rewritten); one merged or closed stays on the mirror.
      const args = [
        'push',
        '--quiet',
        '--porcelain',
        '--',
        url,
        `${head}:refs/heads/main`,
        'refs/tags/*:refs/tags/*',
        '+refs/heads/drafts/*:refs/heads/drafts/*',
      ];
      const pushed = await runGit(gitdir, args, { timeoutMs: mirror.config.timeout * 1000, signal: this.stopping.signal, okCodes: [1] });
      // A ref the mirror refused is said on standard output alone (--porcelain): without it, the
      // error was "failed to push some refs", never which ref nor why (someone else moved main).
      if (pushed.code !== 0)
        throw new GitCommandError(args, pushed.code, `${pushed.stderr}\n${refusedRefs(pushed.stdout.toString('utf8'))}`);
      mirror.status.lastPushed = head;
      mirror.status.lastPushedAt = new Date().toISOString();
      mirror.status.lastError = null;
      mirror.status.failures = 0;
      mirror.retryAt = 0;
    } catch (err) {
      const detail =
        err instanceof GitTimeoutError
          ? `the mirror did not finish within ${mirror.config.timeout} s; the push was stopped`
          : err instanceof GitCommandError
            ? gitCause(err.stderr)
            : (err as Error).message;
      mirror.status.lastError = redactSecrets(detail, url);
      mirror.status.failures++;
      const base = Math.max(mirror.config.interval * 1000, MIN_BACKOFF_MS);
      mirror.retryAt = Date.now() + Math.min(base * 2 ** (mirror.status.failures - 1), MAX_BACKOFF_MS);
      mirror.dirty = true;
      this.log(`mirror ${org} -> ${mirror.status.url} failed (${mirror.status.failures} in a row): ${mirror.status.lastError}`);
    }
    await this.saveState();
  }

  private async behind(mirror: Mirror): Promise<number | null> {
    const pushed = mirror.status.lastPushed;
    if (pushed === null) return null;
    try {
      const { stdout } = await runGit(this.gitdirOf(mirror.config.org), ['rev-list', '--count', `${pushed}..refs/heads/main`]);
      return Number(stdout.toString('utf8').trim());
    } catch {
      return null;
    }
  }

  /** For `c4store mirror list`: what this process last did, beside mirrors.yaml. */
  private async saveState(): Promise<void> {
    const file = path.join(path.resolve(this.dataDir), MIRROR_STATE_FILE_NAME);
    const states = [...this.mirrors.values()].map((m) => m.status);
    try {
      // Owner only, as mirrors.yaml: what a mirror answered may name more than the URL shows.
      const text = `${JSON.stringify({ pid: process.pid, updated: new Date().toISOString(), mirrors: states }, null, 2)}\n`;
      await replaceFile(file, text, { mode: 0o600, durable: false });
    } catch (err) {
      this.log(`${MIRROR_STATE_FILE_NAME} cannot be written: ${(err as Error).message}`);
    }
  }
}

/** What the last server to push recorded (mirror-state.json), for the command line. */
export async function readMirrorState(dataDir: string): Promise<MirrorStatus[]> {
  try {
    const text = await fsp.readFile(path.join(path.resolve(dataDir), MIRROR_STATE_FILE_NAME), 'utf8');
    return (JSON.parse(text) as { mirrors?: MirrorStatus[] }).mirrors ?? [];
  } catch {
    return [];
  }
}

function keyOf(config: MirrorConfig): string {
  return `${config.org}\n${config.url}`;
}

/**
 * The refs `git push --porcelain` says the remote refused (`!\t<src>:<dst>\t[rejected] (fetch
 * first)`), as git's own output shows them: `! [rejected] refs/heads/main (fetch first)`.
 */
function refusedRefs(porcelain: string): string {
  return porcelain
    .split('\n')
    .filter((line) => line.startsWith('!\t'))
    .map((line) => {
      const [, refs = '', outcome = ''] = line.split('\t');
      const [status, ...reason] = outcome.split(' ');
      return `! ${status} ${refs.slice(refs.indexOf(':') + 1)} ${reason.join(' ')}`.trim();
    })
    .join('\n');
}

/**
 * What git said went wrong, in a line: its `fatal:` / `error:` lines (and a refused ref's `! [`),
 * else its last lines. Its last lines alone were often advice ("Please make sure you have the
 * correct access rights") that hid the cause ("… does not appear to be a git repository").
 */
function gitCause(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const causes = lines.filter((line) => /^(?:fatal:|error:|remote: error:|! \[)/.test(line));
  return (causes.length > 0 ? causes : lines).slice(-3).join(' ');
}
