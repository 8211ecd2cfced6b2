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
 * load balancer to tell, SIGTERM need not wait before it stops accepting (`--drain-delay 0`;
 * a later `--drain-delay` in `args` wins).
 */
export async function serveProcess(dataDir: string, ...args: string[]): Promise<ServerProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--data', dataDir, '--port', '0', '--drain-delay', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
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
