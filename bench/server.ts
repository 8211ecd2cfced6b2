/**
 * Servers under test, each in its own process so that the load generator (this process)
 * does not share an event loop with them: `c4store serve` from dist/, exactly as deployed,
 * and the precomputed-buffer Koa route (buffer-server.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { untilListening } from '../test/support/process.js';

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

/** `node dist/cli.js serve --data <dataDir> --port 0 [args]`, resolved once it prints `listening on <url>`. */
export function serveProcess(dataDir: string, args: string[] = [], options: SpawnOptions = {}): Promise<ServerProcess> {
  return spawnListening([...(options.nodeArgs ?? []), CLI, 'serve', '--data', dataDir, '--port', '0', ...args]);
}

/** The minimal Koa route answering precomputed bytes; `bodies` maps a path to a file of its body. */
export function bufferServer(bodies: Record<string, string>, options: SpawnOptions = {}): Promise<ServerProcess> {
  return spawnListening([...(options.nodeArgs ?? []), '--import=tsx', join(ROOT, 'bench', 'buffer-server.ts'), JSON.stringify(bodies)]);
}

async function spawnListening(args: string[]): Promise<ServerProcess> {
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  // Every request logs a line: read them all (the pipe must not fill), keep only the last few.
  const lines: string[] = [];
  let writes = 0;
  const keep = (line: string) => {
    if (/^\{"level":"info".*"method":"(POST|PUT)",.*"status":200,/.test(line)) writes++;
    lines.push(line);
    if (lines.length > 50) lines.shift();
  };
  const url = await untilListening(child, keep, () => lines.join('\n'));
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
    tail: () => lines.join('\n'),
    writes: () => writes,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
