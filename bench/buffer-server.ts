/**
 * The floor for serving a read: a minimal Koa app whose route answers a Buffer read once at
 * start-up, with the headers c4store sends (Content-Type, ETag, Vary). Run as its own
 * process: `node --import=tsx bench/buffer-server.ts '{"/path": "/file/of/body"}'`.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';

const bodies = new Map<string, Buffer>(
  Object.entries(JSON.parse(process.argv[2] ?? '{}') as Record<string, string>).map(([path, file]) => [path, readFileSync(file)]),
);
const etag = `"${'0123456789abcdef'.repeat(3).slice(0, 40)}"`;

const app = new Koa();
app.use((ctx) => {
  const body = bodies.get(ctx.path);
  if (!body) return;
  ctx.vary('Accept');
  ctx.set('ETag', etag);
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = body;
});
const server = createServer(app.callback());
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
