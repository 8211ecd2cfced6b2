import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './http/app.js';
import { Orgs } from './service/orgs.js';
import { KeyStore } from './store/keys.js';

export interface ServerOptions {
  dataDir: string;
  port?: number;
  host?: string;
  /** The address clients reach the service at; diagram urls start with it. */
  publicUrl?: string;
  /** fsync objects, ref and directories before answering a write. */
  durable?: boolean;
  bodyLimit?: number;
  /** Writes one organization lets wait for its lock before answering 503. */
  maxWaitingWrites?: number;
  log?: (line: string) => void;
}

export interface RunningServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

export const DEFAULT_BODY_LIMIT = 10 * 1024 * 1024;

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const log = options.log ?? ((line: string) => console.log(line));
  const orgs = new Orgs(options.dataDir, { durable: options.durable, maxWaitingWrites: options.maxWaitingWrites });
  const keys = new KeyStore(options.dataDir);
  const deps = { orgs, keys, log, publicUrl: '', bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT };
  const app = createApp(deps);
  const server = createServer(app.callback());
  // A client that trickles its headers or body must not hold a connection forever.
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8080, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  deps.publicUrl = (options.publicUrl ?? url).replace(/\/+$/, '');
  return {
    url,
    server,
    close: () => new Promise((resolve, reject) => {
      server.close((err) => (err ? reject(err) : resolve()));
      server.closeAllConnections();
    }),
  };
}
