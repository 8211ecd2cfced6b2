import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { run } from './server.js';

export const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');

/** Runs the built command line and returns its standard output. */
export async function cli(...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [CLI, ...args]);
  return stdout;
}

/** The last line of a command's output: where `org create` and `key create` print the key. */
export function lastLine(output: string): string {
  return output.trim().split('\n').at(-1)!;
}

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  output: string[];
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Reads a spawned server's output line by line (so its pipes never fill) and resolves with
 * the URL of its `listening on <url>` line; rejects, with `context()`, if it exits first.
 */
export function untilListening(
  child: ChildProcess,
  onLine: (line: string, stream: 'stdout' | 'stderr') => void,
  context: () => string = () => '',
): Promise<string> {
  return new Promise((resolve, reject) => {
    for (const stream of ['stdout', 'stderr'] as const) {
      let buffered = '';
      child[stream]!.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        for (const line of lines) {
          onLine(line, stream);
          const match = stream === 'stdout' ? /^listening on (http:\/\/\S+)$/.exec(line) : null;
          if (match) resolve(match[1]);
        }
      });
    }
    child.once('exit', (code, signal) => reject(new Error(`server exited (${code ?? signal}) before listening: ${context()}`)));
    child.once('error', reject);
  });
}

/**
 * `c4store serve` as its own process, resolved once it prints `listening on <url>`. Without a
 * load balancer to tell, SIGTERM need not wait before it stops accepting (`--drain-delay 0`,
 * unless `args` gives one).
 */
export function serveProcess(dataDir: string, ...args: string[]): Promise<ServerProcess> {
  return serveProcessWith({}, dataDir, ...args);
}

/**
 * `serve --data <dataDir>` on a port of the system's choice and without a drain delay, unless
 * `args` gives either (serve refuses an option given twice).
 */
export function serveArguments(dataDir: string, args: readonly string[]): string[] {
  const defaults = Object.entries({ '--port': '0', '--drain-delay': '0' }).filter(([option]) => !args.includes(option));
  return ['serve', '--data', dataDir, ...defaults.flat(), ...args];
}

/** serveProcess with these variables added to the environment. */
export async function serveProcessWith(env: Record<string, string>, dataDir: string, ...args: string[]): Promise<ServerProcess> {
  const child = spawn(process.execPath, [CLI, ...serveArguments(dataDir, args)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const output: string[] = [];
  const url = await untilListening(
    child,
    (line) => output.push(line),
    () => output.join('\n'),
  );
  return {
    url,
    child,
    output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill(signal);
      await exited;
    },
  };
}

/** Pids of `parent`'s child processes whose command line names `script`. */
export async function childrenRunning(parent: number, script: string): Promise<number[]> {
  const { stdout } = await run('ps', ['-o', 'pid=,args=', '--ppid', String(parent)]).catch(() => ({ stdout: '' }));
  return stdout
    .split('\n')
    .filter((line) => line.includes(script))
    .map((line) => Number.parseInt(line.trim(), 10));
}

/** Resolves once `condition` holds, asking every 50 ms; rejects after `timeoutMs`. */
export async function until(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('gave up waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
