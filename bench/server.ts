/**
 * Servers under test, each in its own process so that the load generator (this process)
 * does not share an event loop with them: `c4store serve` from dist/, exactly as deployed,
 * and the precomputed-buffer Koa route (buffer-server.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, readFileSync, watch } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveArguments } from '../test/support/process.js';

export const ROOT = join(import.meta.dirname, '..');
export const CLI = join(ROOT, 'dist', 'cli.js');

export interface ServerProcess {
  url: string;
  pid: number;
  child: ChildProcess;
  /** performance.now() when the process was spawned. */
  spawnedAt: number;
  /** Resident set size (VmRSS), in MB. */
  rssMb(): number;
  /** The last lines the process printed (for error messages). */
  tail(): string;
  /** Successful writes it has logged (POST/PUT answered 200). */
  writes(): number;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  /** Extra node flags, e.g. --cpu-prof. */
  nodeArgs?: string[];
}

/**
 * `node dist/cli.js serve --data <dataDir> --port 0 [args]`, resolved once it prints `listening on
 * <url>`. With no load balancer to tell, its SIGTERM need not wait before it stops accepting
 * (`--drain-delay 0`; the default 5 s came to half a minute of the bench's smoke test and a
 * minute of a whole run; unless `args` gives one).
 */
export function serveProcess(dataDir: string, args: string[] = [], options: SpawnOptions = {}): Promise<ServerProcess> {
  return spawnListening([...(options.nodeArgs ?? []), CLI, ...serveArguments(dataDir, args)]);
}

/** The minimal Koa route answering precomputed bytes; `bodies` maps a path to a file of its body. */
export function bufferServer(bodies: Record<string, string>, options: SpawnOptions = {}): Promise<ServerProcess> {
  return spawnListening([...(options.nodeArgs ?? []), '--import=tsx', join(ROOT, 'bench', 'buffer-server.ts'), JSON.stringify(bodies)]);
}

/**
 * The server's log (a line per request) goes to a file, not to a pipe this process reads: the
 * reader woken by every line is this process, the load generator, and on two cores it took the
 * server's CPU at each of its writes (measured: 1-client updates 0.8–3.8 ms slower with the log
 * on a pipe read here than in a file). A deployment's log reader (journald, a container runtime)
 * does not run on the request path either.
 */
async function spawnListening(args: string[]): Promise<ServerProcess> {
  const spawnedAt = performance.now();
  const logDir = await mkdtemp(join(tmpdir(), 'c4store-bench-log-'));
  const logFile = join(logDir, 'server.log');
  const out = openSync(logFile, 'w');
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', out, 'pipe'] });
  closeSync(out);
  child.once('exit', () => void rm(logDir, { recursive: true, force: true }));
  const errors: string[] = [];
  child.stderr!.on('data', (chunk: Buffer) => {
    errors.push(chunk.toString());
    if (errors.length > 50) errors.shift();
  });
  const logLines = () => {
    try {
      return readFileSync(logFile, 'utf8').split('\n');
    } catch {
      return [];
    }
  };
  const lines = () => [...logLines().slice(-50), ...errors].join('\n');
  const url = await new Promise<string>((resolve, reject) => {
    let settled = false;
    const look = () => {
      if (settled) return;
      const match = /^listening on (http:\/\/\S+)$/m.exec(readFileSync(logFile, 'utf8'));
      if (!match) return;
      settled = true;
      watcher.close();
      clearInterval(poll);
      resolve(match[1]!);
    };
    // Told by inotify at once; the poll in case it is not.
    const watcher = watch(logFile, look);
    const poll = setInterval(look, 50);
    child.once('exit', (code, signal) => {
      if (settled) return;
      settled = true;
      watcher.close();
      clearInterval(poll);
      reject(new Error(`server exited (${code ?? signal}) before listening: ${lines()}`));
    });
  });
  const pid = child.pid!;
  return {
    url,
    pid,
    child,
    spawnedAt,
    rssMb: () => {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]);
      return kb / 1024;
    },
    tail: lines,
    writes: () => logLines().filter((line) => /^\{"level":"info".*"method":"(POST|PUT)",.*"status":200,/.test(line)).length,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
