/**
 * Which process delivers a subscription's events: the one holding its lease, a file created
 * with O_EXCL and touched while held. Several processes on one data directory each try; one
 * wins, the others look again later. A lease left by a killed process is taken over: at once
 * when its process is gone from this machine, else once it has not been touched for `staleMs`.
 *
 * Two processes taking over one stale lease at the same moment could both believe they won;
 * each checks that the file still names it before every delivery, which leaves a window of
 * one delivery, and a receiver de-duplicates by `webhook-id` in any case (Standard Webhooks).
 * A lease naming this very process id is its own only if it holds that lease now: an earlier
 * run under the same id (a restarted container's PID 1) left it, and is gone.
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { isCode } from '../store/durable-files.js';

export interface LeaseSettings {
  /** A lease not touched for this long is free (ms, default 30 s). */
  staleMs: number;
}

export const DEFAULT_LEASE_STALE_MS = 30_000;
const LEASE_FILE = 'lease';

interface Holder {
  pid: number;
  host: string;
  token: string;
}

/**
 * The tokens of the leases this process holds. A lease naming this process's id and host but
 * none of these was left by an earlier run under the same id (a container's server is PID 1
 * on every start, on the same host name): its holder is gone.
 */
const held = new Set<string>();

export class Lease {
  private constructor(
    private readonly file: string,
    private readonly token: string,
  ) {}

  /** The lease of directory `dir`, or undefined when a live process holds it. */
  static async acquire(dir: string, settings: LeaseSettings): Promise<Lease | undefined> {
    const file = path.join(dir, LEASE_FILE);
    const holder: Holder = { pid: process.pid, host: hostname(), token: randomBytes(12).toString('hex') };
    for (let tries = 0; tries < 2; tries++) {
      try {
        await fsp.writeFile(file, JSON.stringify(holder), { flag: 'wx', mode: 0o600 });
        held.add(holder.token);
        return new Lease(file, holder.token);
      } catch (error) {
        if (isCode(error, 'ENOENT')) return undefined; // the subscription was removed
        if (!isCode(error, 'EEXIST')) throw error;
      }
      if (!(await isStale(file, settings.staleMs))) return undefined;
      await fsp.rm(file, { force: true });
    }
    return undefined;
  }

  /** Whether the file still names this holder; touches it so that it stays fresh. */
  async renew(): Promise<boolean> {
    try {
      const holder = JSON.parse(await fsp.readFile(this.file, 'utf8')) as Holder;
      if (holder.token !== this.token) return false;
      const now = new Date();
      await fsp.utimes(this.file, now, now);
      return true;
    } catch {
      return false;
    }
  }

  async release(): Promise<void> {
    if (await this.renew()) await fsp.rm(this.file, { force: true });
    held.delete(this.token);
  }
}

async function isStale(file: string, staleMs: number): Promise<boolean> {
  try {
    const [stat, text] = await Promise.all([fsp.stat(file), fsp.readFile(file, 'utf8')]);
    let holder: Holder | undefined;
    try {
      holder = JSON.parse(text) as Holder;
    } catch {
      // Half-written by a process killed while creating it: stale once old enough.
    }
    if (holder?.host === hostname() && (holder.pid === process.pid ? !held.has(holder.token) : !isAlive(holder.pid))) return true;
    return Date.now() - stat.mtimeMs >= staleMs;
  } catch (error) {
    if (isCode(error, 'ENOENT')) return true;
    throw error;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return isCode(error, 'EPERM');
  }
}
