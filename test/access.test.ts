import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { Repo } from '../src/store/repo.js';
import {
  API,
  allFiles,
  allObjects,
  concrete,
  isEditorOnly,
  isRead,
  keyedApiRoutes,
  refusalMatrix,
  requestsOf,
  send,
  twoOrgs,
  withAt,
  writeBody,
  type Answer,
  type OrgData,
  type Route,
} from './support/access.js';
import { TestServer } from './support/server.js';

/**
 * Who may see and change what: every route of the app × every way of presenting credentials,
 * a second organization `other` in the same data directory whose key must only ever reach
 * `other`'s model, and keys at rest, in logs and in error texts.
 */

let s: TestServer;
let acme: OrgData;
let other: OrgData;
let revokedKey: string;
let ghostKey: string;
let routes: Route[];
const headOf = async (org: OrgData) => (await readFile(join(org.gitdir, 'refs', 'heads', 'main'), 'utf8')).trim();
/** Every answer of the matrix, to look for keys in error texts at the end. */
const answers: Answer[] = [];

test.before(async () => {
  s = await TestServer.start();
  ({ acme, other, revokedKey, ghostKey } = await twoOrgs(s));
  routes = keyedApiRoutes(s.dataDir);
});

test.after.always(async () => {
  await s?.close();
});

test.serial('the matrix covers every route the app serves', (t) => {
  const names = routes.map((r) => `${r.method} ${r.path}`);
  t.true(routes.length >= 39, `${routes.length} routes`);
  for (const expected of [
    'GET /api/external/model',
    'POST /api/external/model',
    'HEAD /api/external/component/:id',
    'PUT /api/external/attributes',
    'GET /api/external/types/:id',
  ]) {
    t.true(names.includes(expected), expected);
  }
  // Every route can be filled in and written to by the matrix (throws for one it does not know).
  for (const route of routes) {
    t.notThrows(() => concrete(route, acme.ids), `${route.method} ${route.path}`);
    if (!isRead(route)) t.notThrows(() => writeBody(route.path), `${route.method} ${route.path}`);
  }
});

test.serial('every route × every refused credential: 401 with the exact text, and nothing written anywhere', async (t) => {
  const heads = [await headOf(acme), await headOf(other)];
  const { cells, violations } = await refusalMatrix(s, routes, { acme, other, revokedKey, ghostKey }, answers);
  t.log(`${cells} cells`);
  t.deepEqual(violations, []);
  t.true(cells > 1500);
  t.deepEqual([await headOf(acme), await headOf(other)], heads);
});

test.serial("another organization's key reaches only that organization: on every route, by id, by ?at=", async (t) => {
  const acmeHead = await headOf(acme);
  const otherHead = await headOf(other);
  // Each organization reads its whole history first, so that every commit of both has been
  // parsed by this process (its object cache is shared by all repositories).
  for (const org of [acme, other]) {
    for (const commit of org.commits)
      t.is((await send(s.url, 'GET', `${API}/model?at=${commit}`, { authorization: `Bearer ${org.key}` })).status, 200);
  }
  for (const [caller, victim] of [
    [other, acme],
    [acme, other],
  ] as const) {
    const auth = { authorization: `Bearer ${caller.key}` };
    const victimHead = await headOf(victim);
    const mentionsVictim = (text: string) =>
      victim.secrets.filter((id) => text.includes(id)).concat(text.includes(`${victim.slug.toUpperCase()}-only`) ? ['its names'] : []);
    for (const route of routes.filter(isRead)) {
      // The caller's own resources, and the latest and first commits of its own history.
      for (const path of requestsOf(route, caller)) {
        const answer = await send(s.url, route.method, path, auth);
        answers.push(answer);
        t.is(answer.status, 200, `${caller.slug}: ${route.method} ${path}: ${answer.text.slice(0, 200)}`);
        t.deepEqual(mentionsVictim(answer.text), [], `${caller.slug}: ${route.method} ${path} shows ${victim.slug}'s data`);
        // Share links are not the model: their answers name no commit.
        if (!/[?&]at=/.test(path) && !path.includes('/share-links')) t.is(answer.headers.get('etag'), `"${await headOf(caller)}"`);
      }
      // The victim's ids and commits are not found.
      if (route.path.endsWith('/:id')) {
        const path = concrete(route, victim.ids);
        const answer = await send(s.url, route.method, path, auth);
        answers.push(answer);
        t.is(answer.status, 404, `${caller.slug}: ${route.method} ${path}`);
        const kind = path.includes('/share-links/') ? 'share link' : /\/(\w+?)s?\/[^/]+$/.exec(path)![1]!;
        if (route.method === 'GET') {
          t.deepEqual(JSON.parse(answer.text), {
            error: `${kind[0]!.toUpperCase()}${kind.slice(1)} with id '${path.split('/').at(-1)}' does not exist.`,
          });
        }
      }
      for (const commit of victim.commits) {
        const path = withAt(concrete(route, caller.ids), commit);
        const answer = await send(s.url, route.method, path, auth);
        answers.push(answer);
        t.is(answer.status, 404, `${caller.slug}: ${route.method} ${path}`);
        if (route.method === 'GET') t.deepEqual(JSON.parse(answer.text), { error: `Commit '${commit}' does not exist.` });
      }
    }
    // Writes naming the victim's resources find nothing; a write that creates goes to the caller.
    // [path, body, error, what it concerns (C4store-Error-Context)]
    const refusals: Array<[string, unknown, string, string?]> = [
      ['/tag', [{ id: victim.ids.tag, name: 'hijack', color: 'red' }], `Tag with id '${victim.ids.tag}' does not exist.`],
      [
        '/attribute',
        [{ id: victim.ids.attribute, name: 'hijack', type: 'STRING' }],
        `Attribute with id '${victim.ids.attribute}' does not exist.`,
      ],
      ['/component', [{ id: victim.ids.component, name: 'hijack' }], `Component with id '${victim.ids.component}' does not exist.`],
      [
        '/component',
        [{ name: 'link', linksTo: [victim.ids.component] }],
        `Component with id '${victim.ids.component}' does not exist.`,
        `element 0 'link'`,
      ],
      [
        '/component',
        [{ name: 'typed', typeId: victim.ids.type }],
        `Type with id '${victim.ids.type}' does not exist.`,
        `element 0 'typed'`,
      ],
      [
        '/component',
        [{ name: 'valued', attributes: [{ id: victim.ids.attribute, value: 'x' }] }],
        `Attribute with id '${victim.ids.attribute}' does not exist.`,
        `element 0 'valued'`,
      ],
      ['/diagram', [{ id: victim.ids.diagram, name: 'hijack', level: 'C1' }], `Diagram with id '${victim.ids.diagram}' does not exist.`],
      [
        '/diagram',
        [{ name: 'd', level: 'C1', tags: [{ id: victim.ids.tag }] }],
        `Tag with id '${victim.ids.tag}' does not exist.`,
        `element 0 'd'`,
      ],
      [
        '/diagram',
        [{ name: 'd', level: 'C1', componentInstances: [{ component: victim.ids.component }] }],
        `Component with id '${victim.ids.component}' does not exist.`,
        `element 0 'd'`,
      ],
      [
        '/diagram',
        [{ name: 'd', level: 'C1', componentInstances: [{ component: `${victim.slug}-c` }] }],
        `Ref '${victim.slug}-c' does not resolve to a component.`,
        `element 0 'd'`,
      ],
      [
        '/model',
        {
          diagrams: [
            {
              name: 'd',
              level: 'C1',
              componentInstances: [{ ref: 'a' }],
              relations: [{ fromComponentInstance: 'a', toComponentInstance: 'a', linksTo: [victim.ids.diagram] }],
            },
          ],
        },
        `Diagram with id '${victim.ids.diagram}' does not exist.`,
        `element diagrams.0 'd'`,
      ],
    ];
    for (const [path, body, error, context] of refusals) {
      const callerHead = await headOf(caller);
      const answer = await send(s.url, 'POST', API + path, auth, body);
      answers.push(answer);
      t.is(answer.status, 400, `${caller.slug}: POST ${path} ${JSON.stringify(body)}: ${answer.text}`);
      t.deepEqual(JSON.parse(answer.text), { error });
      t.is(answer.headers.get('c4store-error-context') ?? undefined, context, `${caller.slug}: POST ${path}: what it concerns`);
      t.is(await headOf(caller), callerHead);
    }
    // The victim's refs mean nothing to the caller: a component with the victim's ref is the caller's own new one.
    const own = await send(s.url, 'POST', `${API}/component`, auth, [{ ref: `${victim.slug}-c`, name: `${caller.slug} made this` }]);
    t.is(own.status, 200, own.text);
    t.not(JSON.parse(own.text)[0].id, victim.ids.component);
    // If-Match with the victim's head: not the caller's model.
    const conditional = await send(s.url, 'POST', `${API}/tag`, { ...auth, 'if-match': `"${victimHead}"` }, [
      { name: 'conditional', color: 'red' },
    ]);
    t.is(conditional.status, 412);
    t.deepEqual(JSON.parse(conditional.text), { error: `The model has changed since ${victimHead}.` });
    t.is(await headOf(victim), victimHead, `${caller.slug}'s writes left ${victim.slug} alone`);
  }
  // Each wrote its own component, in its own repository.
  t.not(await headOf(acme), acmeHead);
  t.not(await headOf(other), otherHead);
});

test.serial('the reader key reads every route and may write none', async (t) => {
  const head = await headOf(acme);
  for (const route of routes) {
    for (const path of requestsOf(route, acme)) {
      const answer = await send(s.url, route.method, path, { 'x-api-key': s.readerKey }, isRead(route) ? undefined : writeBody(route.path));
      answers.push(answer);
      if (isRead(route) && !isEditorOnly(route)) {
        t.is(answer.status, 200, `${route.method} ${path}: ${answer.text.slice(0, 200)}`);
      } else {
        t.is(answer.status, 403, `${route.method} ${path}`);
        if (route.method !== 'HEAD') t.deepEqual(JSON.parse(answer.text), { error: 'This API key may only read.' });
      }
    }
  }
  t.is(await headOf(acme), head);
});

test.serial('keys at rest: only SHA-256 hashes in keys.yaml (mode 0600), no key in any file or git object', async (t) => {
  const keys = [s.key, s.readerKey, revokedKey, ghostKey, other.key];
  const keysFile = join(s.dataDir, 'keys.yaml');
  t.is((await stat(keysFile)).mode & 0o777, 0o600);
  const stored = await readFile(keysFile, 'utf8');
  for (const key of keys) t.true(stored.includes(createHash('sha256').update(key).digest('hex')), 'the hash is what is stored');
  const files = await allFiles(s.dataDir);
  t.true(files.length > 20);
  for (const { path, content } of files) {
    for (const key of keys) {
      t.false(content.includes(key), `${path} holds a key`);
      t.false(content.includes(key.slice(4, 24)), `${path} holds part of a key`);
    }
  }
  for (const gitdir of [acme.gitdir, other.gitdir]) {
    const objects = await allObjects(gitdir);
    t.true(objects.length > 1000);
    for (const key of keys) t.false(objects.includes(key), `an object of ${gitdir} holds a key`);
  }
});

test.serial('keys never in logs or error texts, even when a client puts one in the URL', async (t) => {
  // Mistakes a client might make: the key as an id, in ?at=, in the path of a write.
  for (const path of [`${API}/tag/${s.key}`, `${API}/component/${other.key}`, `/${s.key}`, `${API}/${s.key}/tag`]) {
    answers.push(await send(s.url, 'GET', path, { authorization: `Bearer ${s.key}` }));
  }
  await send(s.url, 'GET', `${API}/tag?at=${s.key}`, { authorization: `Bearer ${s.key}` });
  const keys = [s.key, s.readerKey, revokedKey, ghostKey, other.key];
  const log = s.logs.join('\n');
  t.true(s.logs.length > 1000, `${s.logs.length} log lines`);
  t.true(log.includes('c4s_[redacted]'), 'a key in a path is redacted');
  for (const key of keys) {
    t.false(log.includes(key), 'a key in the log');
    t.false(log.includes(key.slice(4, 24)), 'part of a key in the log');
  }
  // Error texts answer what was sent at most (an id that is not found, echoed to its own sender);
  // none carries a key the request did not put in its URL.
  t.true(answers.length > 1000);
  for (const answer of answers) {
    for (const key of keys) {
      if (answer.text.includes(key)) t.true(answer.text.includes('does not exist'), `a key in ${answer.text.slice(0, 200)}`);
    }
  }
  const echoed = answers.filter((a) => keys.some((key) => a.text.includes(key)));
  t.is(echoed.length, 2, 'only the two GETs that put a key where an id goes');
});

// Found by the matrix above: hasCommit used to answer from the parsed-commit cache that every
// repository of the process shares, so `?at=<acme's commit>` with other's key got past it (500).
test.serial('Repo.hasCommit answers for its own repository, not from the object cache every repository shares', async (t) => {
  const commit = acme.commits[0]!;
  t.true(await new Repo(acme.gitdir).hasCommit(commit)); // parses it, and caches it process-wide
  t.false(await new Repo(other.gitdir).hasCommit(commit), "other's repository does not hold acme's commit");
});
