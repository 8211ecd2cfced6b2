/**
 * A real HAProxy in front of `c4store serve` instances, run with the configuration the
 * documentation gives (docs/haproxy.cfg), and its runtime API: what the multi-instance tests
 * share. Debian's haproxy is installed when missing (scripts/ensure-haproxy.mjs); where it
 * cannot be, `haproxy.reason` says why and the tests skip themselves.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';
import { ensureHaproxy } from '../../scripts/ensure-haproxy.mjs';

export const HAPROXY_CONFIG = join(import.meta.dirname, '..', '..', 'docs', 'haproxy.cfg');

export const haproxy = ensureHaproxy();
if (haproxy.reason) console.error(`multi-instance test SKIPPED: ${haproxy.reason}`);

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** One line of HAProxy's runtime API. */
export async function askHaproxy(socket: string, command: string): Promise<string> {
  const connection = createConnection(socket);
  await once(connection, 'connect');
  connection.end(`${command}\n`);
  let text = '';
  for await (const chunk of connection) text += chunk;
  return text;
}

/** The health state HAProxy holds of each server of the backend: 'UP', 'DOWN', 'MAINT', … */
export async function serverStates(socket: string): Promise<Record<string, string>> {
  const lines = (await askHaproxy(socket, 'show stat')).split('\n');
  const header = lines[0]!.replace(/^# /, '').split(',');
  const states: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const row = line.split(',');
    if (row[0] === 'c4store' && /^c\d$/.test(row[1] ?? '')) states[row[1]!] = row[header.indexOf('status')]!;
  }
  return states;
}

export async function until(what: string, condition: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface Balancer {
  /** Where clients connect: `http://127.0.0.1:<port>`. */
  url: string;
  /** The runtime API's socket (askHaproxy). */
  socket: string;
  child: ChildProcess;
  /** What HAProxy wrote to standard error. */
  stderr: string[];
  /** Resolves once the server `name` (c1, c2, c3) is in the state HAProxy calls `state`. */
  until(name: string, state: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * HAProxy with docs/haproxy.cfg in front of the instances at `backends` (its servers c1, c2, c3
 * in order; one not given points at a port nothing listens on, and is DOWN). `socketDir` holds
 * the runtime API's socket.
 */
export async function startBalancer(backends: string[], socketDir: string): Promise<Balancer> {
  const front = await freePort();
  const socket = join(socketDir, 'haproxy.sock');
  const servers = [...backends];
  while (servers.length < 3) servers.push(`127.0.0.1:${await freePort()}`);
  const stderr: string[] = [];
  const child = spawn(haproxy.path!, ['-db', '-f', HAPROXY_CONFIG], {
    env: {
      ...process.env,
      C4STORE_LISTEN: `127.0.0.1:${front}`,
      C4STORE_1: servers[0],
      C4STORE_2: servers[1],
      C4STORE_3: servers[2],
      HAPROXY_STATS_SOCKET: socket,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', (chunk) => stderr.push(String(chunk)));
  const inState = (name: string, state: string) => async () =>
    (await serverStates(socket).catch(() => ({}) as Record<string, string>))[name] === state;
  return {
    url: `http://127.0.0.1:${front}`,
    socket,
    child,
    stderr,
    until: (name, state) => until(`${name} ${state} in HAProxy (${stderr.join('')})`, inState(name, state)),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
