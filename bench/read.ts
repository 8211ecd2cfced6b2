/** The read path: GET /component and GET /model with 16 clients, beside a route answering the same bytes from a Buffer. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchOrg } from './fixture.js';
import { load } from './load.js';
import { bufferServer, type ServerProcess, type SpawnOptions } from './server.js';
import type { Figure, Measurement } from './stats.js';
import { settle } from './write.js';

export const READ_PATHS = { component: '/api/external/component', model: '/api/external/model' } as const;
export type ReadName = keyof typeof READ_PATHS;

export interface ReadFigures {
  c4store: Record<ReadName, Figure>;
  buffer: Record<ReadName, Figure>;
  /** Response sizes in bytes. */
  bytes: Record<ReadName, number>;
}

export const READ_CONNECTIONS = 16;

/**
 * Fetches both responses from c4store as they stand and starts the buffer route serving
 * exactly those bytes. Returns the route and the sizes.
 */
export async function startBufferRoute(server: ServerProcess, org: BenchOrg, workDir: string, spawn: SpawnOptions = {}) {
  const bytes = {} as Record<ReadName, number>;
  const files: Record<string, string> = {};
  for (const name of Object.keys(READ_PATHS) as ReadName[]) {
    const path = READ_PATHS[name];
    const response = await fetch(server.url + path, { headers: { authorization: `Bearer ${org.key}` } });
    const body = Buffer.from(await response.arrayBuffer());
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${body.toString()}`);
    bytes[name] = body.length;
    files[path] = join(workDir, `${name}.json`);
    writeFileSync(files[path]!, body);
  }
  return { route: await bufferServer(files, spawn), bytes };
}

/** Keys `c4store:component`, `buffer:component`, `c4store:model`, `buffer:model`, side by side. */
export function readMeasurements(server: ServerProcess, route: ServerProcess, org: BenchOrg, roundMs: number): Measurement[] {
  const get = (target: ServerProcess, who: 'c4store' | 'buffer', name: ReadName): Measurement => ({
    key: `${who}:${name}`,
    durationMs: roundMs,
    label: who === 'c4store' ? `c4store GET /${name}` : `buffer route /${name}`,
    async round(durationMs) {
      // c4store serializes a body once per commit: the first request after a write pays for it.
      if (who === 'c4store') await settle(target, org, READ_PATHS[name]);
      return load({
        url: target.url,
        connections: READ_CONNECTIONS,
        durationMs,
        path: READ_PATHS[name],
        headers: { authorization: `Bearer ${org.key}` },
      });
    },
  });
  return (Object.keys(READ_PATHS) as ReadName[]).flatMap((name) => [get(server, 'c4store', name), get(route, 'buffer', name)]);
}
