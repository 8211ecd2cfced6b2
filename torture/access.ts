/**
 * Access, the long version of test/access.test.ts: the whole refusal matrix (every route ×
 * every refused credential), then two organizations in one data directory used at once by
 * many clients for a while — reads of every route (also `?at=` their own commits), writes of
 * every kind, and refused credentials mixed in — where no answer may ever carry the other
 * organization's data, and each organization's history must hold exactly its own
 * acknowledged writes. Finally: keys only as hashes at rest (every file, every git object),
 * keys.yaml 0600, no key in the log.
 *
 *   node --import=tsx torture/access.ts        (or: npm run torture -- access)
 *
 * Environment: TORTURE_ACCESS_SECONDS (the concurrent phase, default 20).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import {
  API,
  allFiles,
  allObjects,
  concrete,
  isRead,
  keyedApiRoutes,
  refusalMatrix,
  refusedCredentials,
  send,
  twoOrgs,
  withAt,
  type OrgData,
  type Route,
} from '../test/support/access.js';
import { isErrorLine, TestServer } from '../test/support/server.js';

export interface AccessOptions {
  /** Length of the concurrent phase. */
  durationMs?: number;
  /** Clients per organization in that phase. */
  clients?: number;
  log?: (line: string) => void;
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;

interface Side {
  org: OrgData;
  label: string;
  /** Ids this organization's writes created (the other one's answers must never show them). */
  created: Set<string>;
  /** Commits its acknowledged writes made. */
  commits: string[];
  acknowledged: number;
}

export async function run(options: AccessOptions = {}): Promise<Record<string, number>> {
  const log = options.log ?? console.log;
  const durationMs = options.durationMs ?? Number(process.env.TORTURE_ACCESS_SECONDS ?? 20) * 1000;
  const clients = options.clients ?? 8;
  const s = await TestServer.start();
  const problems: string[] = [];
  const problem = (line: string) => {
    if (problems.length < 100) problems.push(line);
  };
  try {
    const orgs = await twoOrgs(s);
    const routes = keyedApiRoutes(s.dataDir);

    // 1. The refusal matrix.
    const matrix = await refusalMatrix(s, routes, orgs);
    matrix.violations.forEach(problem);
    log(`access: ${matrix.cells} matrix cells, ${matrix.violations.length} problems`);

    // 2. Both organizations at once.
    const sides: Side[] = [orgs.acme, orgs.other].map((org) => ({
      org,
      label: `${org.slug.toUpperCase()}-only`,
      created: new Set(),
      commits: [],
      acknowledged: 0,
    }));
    const startCounts = await Promise.all(sides.map((side) => commitCount(side.org)));
    const credentials = refusedCredentials(
      { key: s.key, readerKey: s.readerKey, revokedKey: orgs.revokedKey, ghostKey: orgs.ghostKey },
      orgs.other.key,
    );
    let requests = 0;
    let refusedAsExpected = 0;
    let fiveHundreds = 0;
    const deadline = Date.now() + durationMs;
    const client = async (self: Side, rival: Side, n: number) => {
      const auth = { authorization: `Bearer ${self.org.key}` };
      const shows = (text: string) =>
        text.includes(rival.label) ||
        rival.org.secrets.some((id) => text.includes(id)) ||
        [...rival.created].some((id) => text.includes(id));
      for (let i = 0; Date.now() < deadline; i++) {
        const roll = Math.random();
        requests++;
        if (roll < 0.15) {
          // Someone with bad credentials, on any route.
          const route = pick(routes);
          const c = pick(credentials);
          const answer = await send(
            s.url,
            route.method,
            concrete(route, rival.org.ids),
            c.headers,
            isRead(route) ? undefined : { components: [] },
          );
          if (answer.status === 401) refusedAsExpected++;
          else problem(`${c.name} on ${route.method} ${route.path}: ${answer.status}`);
        } else if (roll < 0.45) {
          // A write that creates: named after its organization.
          const name = `${self.label} ${n}.${i}`;
          const [path, body] = pick<[string, unknown]>([
            ['/tag', [{ name, color: 'red' }]],
            ['/attribute', [{ name, type: 'STRING' }]],
            ['/component', [{ name, typeSlug: 'container', linksTo: [self.org.ids.component] }]],
            ['/diagram', [{ name, level: 'C1', componentInstances: [{ component: self.org.ids.component }] }]],
            [
              '/model',
              {
                components: [{ name, ref: `${name}-ref` }],
                diagrams: [{ name, level: 'C3', componentInstances: [{ component: `${name}-ref` }] }],
              },
            ],
          ]);
          const answer = await send(s.url, 'POST', API + path, auth, body);
          if (answer.status >= 500) fiveHundreds++;
          if (answer.status !== 200) {
            problem(`${self.org.slug} POST ${path}: ${answer.status} ${answer.text.slice(0, 200)}`);
            continue;
          }
          self.acknowledged++;
          self.commits.push(answer.headers.get('etag')!.replaceAll('"', ''));
          const data = JSON.parse(answer.text);
          for (const resource of Array.isArray(data) ? data : [...data.components, ...data.diagrams]) self.created.add(resource.id);
          if (shows(answer.text)) problem(`${self.org.slug} POST ${path} answered with ${rival.org.slug}'s data`);
        } else {
          // A read of any route, now or as of one of its own commits.
          const route: Route = pick(routes.filter(isRead));
          let path = concrete(route, self.org.ids);
          if (!route.path.endsWith('/:id') && self.commits.length > 0 && Math.random() < 0.3) path = withAt(path, pick(self.commits));
          const answer = await send(s.url, route.method, path, auth);
          if (answer.status >= 500) fiveHundreds++;
          if (answer.status !== 200) problem(`${self.org.slug} ${route.method} ${path}: ${answer.status} ${answer.text.slice(0, 200)}`);
          if (shows(answer.text)) problem(`${self.org.slug} ${route.method} ${path} answered with ${rival.org.slug}'s data`);
        }
      }
    };
    await Promise.all(sides.flatMap((self, k) => Array.from({ length: clients }, (_, n) => client(self, sides[1 - k]!, n))));
    const endCounts = await Promise.all(sides.map((side) => commitCount(side.org)));
    for (const [k, side] of sides.entries()) {
      if (endCounts[k]! - startCounts[k]! !== side.acknowledged) {
        problem(`${side.org.slug}: ${endCounts[k]! - startCounts[k]!} commits for ${side.acknowledged} acknowledged writes`);
      }
      // Everything it created is in its model, and nothing of it in the other's.
      const own = (await send(s.url, 'GET', `${API}/model`, { authorization: `Bearer ${side.org.key}` })).text;
      const missing = [...side.created].filter((id) => !own.includes(id));
      if (missing.length) problem(`${side.org.slug}: ${missing.length} created resources missing from its model`);
      const rivalModel = (await send(s.url, 'GET', `${API}/model`, { authorization: `Bearer ${sides[1 - k]!.org.key}` })).text;
      if ([...side.created].some((id) => rivalModel.includes(id)))
        problem(`${side.org.slug}'s resources in ${sides[1 - k]!.org.slug}'s model`);
    }
    log(
      `access: ${requests} requests by ${2 * clients} clients in ${Math.round(durationMs / 1000)} s; acknowledged writes ${sides.map((x) => `${x.org.slug} ${x.acknowledged}`).join(', ')}`,
    );

    // 3. Keys at rest and in the log.
    const keys = [s.key, s.readerKey, orgs.revokedKey, orgs.ghostKey, orgs.other.key];
    const keysFile = join(s.dataDir, 'keys.yaml');
    const mode = (await stat(keysFile)).mode & 0o777;
    if (mode !== 0o600) problem(`keys.yaml has mode ${mode.toString(8)}`);
    const stored = await readFile(keysFile, 'utf8');
    for (const key of keys)
      if (!stored.includes(createHash('sha256').update(key).digest('hex'))) problem('a key hash missing from keys.yaml');
    let filesScanned = 0;
    for (const { path, content } of await allFiles(s.dataDir)) {
      filesScanned++;
      if (keys.some((key) => content.includes(key) || content.includes(key.slice(4, 24)))) problem(`${path} holds a key`);
    }
    let objectBytes = 0;
    for (const side of sides) {
      const objects = await allObjects(side.org.gitdir);
      objectBytes += objects.length;
      if (keys.some((key) => objects.includes(key))) problem(`an object of ${side.org.slug} holds a key`);
    }
    const logText = s.logs.join('\n');
    if (keys.some((key) => logText.includes(key) || logText.includes(key.slice(4, 24)))) problem('a key in the log');
    const unexpected = s.logs.filter((line) => isErrorLine(line));
    for (const line of unexpected) problem(line.slice(0, 300));

    for (const line of problems) log(`  PROBLEM ${line}`);
    return {
      'access: routes': routes.length,
      'access: matrix cells checked': matrix.cells,
      'access: concurrent requests': requests,
      'access: refused credentials answered 401': refusedAsExpected,
      'access: writes acknowledged (acme)': sides[0]!.acknowledged,
      'access: writes acknowledged (other)': sides[1]!.acknowledged,
      'access: 5xx answers': fiveHundreds,
      'access: files scanned for keys': filesScanned,
      'access: git object bytes scanned for keys': objectBytes,
      'access: log lines scanned for keys': s.logs.length,
      'access: problems': problems.length,
    };
  } finally {
    await s.close();
  }
}

async function commitCount(org: OrgData): Promise<number> {
  const { stdout } = await promisify(execFile)('git', ['--git-dir', org.gitdir, 'rev-list', '--count', 'main']);
  return Number(stdout.trim());
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const figures = await run();
  for (const [name, value] of Object.entries(figures)) console.log(`${name}: ${value}`);
}
