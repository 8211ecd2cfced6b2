/**
 * The access matrix: every route the app serves (read from its routers, so a new route
 * cannot be forgotten) × every way of presenting credentials. Shared by test/access.test.ts
 * and torture/access.ts.
 */
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createApp } from '../../src/http/app.js';
import { YamlPool } from '../../src/http/yaml-pool.js';
import { ROUTES } from '../../src/openapi/routes.js';
import { Orgs } from '../../src/service/orgs.js';
import { KeyStore } from '../../src/store/keys.js';
import type { TestServer } from './server.js';

export const API = '/api/external';
const run = promisify(execFile);

export interface Route {
  method: string;
  /** With `:id` where a resource id goes. */
  path: string;
}

/** Every (method, path) of the app's routers, read from the routers themselves. */
export function appRoutes(dataDir: string): Route[] {
  const pool = new YamlPool();
  const app = createApp({
    orgs: new Orgs(dataDir),
    keys: new KeyStore(dataDir),
    log: () => {},
    publicUrl: '',
    bodyLimit: 1,
    bodyBudget: 1,
    yamlPool: pool,
  });
  const routes: Route[] = [];
  for (const middleware of app.middleware as Array<{ router?: { stack: Array<{ methods: string[]; path: string }> } }>) {
    for (const layer of middleware.router?.stack ?? []) {
      for (const method of layer.methods) routes.push({ method, path: layer.path });
    }
  }
  void pool.close();
  return routes;
}

/**
 * The routes of the API that want a key: every one under API but the OpenAPI document, public
 * on purpose (a client generator reads it before it has a key).
 */
export function keyedApiRoutes(dataDir: string): Route[] {
  const publicPaths = new Set(ROUTES.filter((r) => r.absolute).map((r) => r.path));
  return appRoutes(dataDir).filter((r) => r.path.startsWith(API) && !publicPaths.has(r.path));
}

/** What one organization holds, to address its resources and to recognize them in others' answers. */
export interface OrgData {
  slug: string;
  key: string;
  /** Resource id by kind: tag, attribute, component, diagram, type. */
  ids: Record<string, string>;
  /** Every id of the organization (resources, nested elements, commits): none may appear in another's answers. */
  secrets: string[];
  commits: string[];
  gitdir: string;
}

const WRITE_BODIES: Record<string, unknown> = {
  tag: [{ name: 'intruder', color: 'red' }],
  attribute: [{ name: 'intruder', type: 'STRING' }],
  attributes: [{ name: 'intruder', type: 'STRING' }],
  component: [{ name: 'intruder' }],
  diagram: [{ name: 'intruder', level: 'C1' }],
  model: { components: [{ name: 'intruder' }] },
  // The current form (issue 11): one object per create, PATCH of one resource, upsert-batch,
  // template; DELETE sends this body too (it is ignored).
  tags: { name: 'intruder', color: 'red' },
  components: { name: 'intruder' },
  diagrams: { name: 'intruder', level: 'C1' },
  template: { components: [{ name: 'intruder' }] },
  ':id': { name: 'intruder' },
  'upsert-batch': [{ name: 'intruder' }],
  // Versions (issue 12): a tag, no commit, but a write all the same.
  version: { name: 'intruder' },
  versions: { name: 'intruder' },
  revert: { commit: 'main' },
  // Share links: not the model, but a write all the same (an editor's).
  'share-links': { label: 'intruder' },
  // Drafts (issue 26): opening one makes no commit, but is a write all the same.
  drafts: { name: 'intruder' },
  'drafts/:name': {},
  'drafts/:name/merge': {},
  'drafts/:name/update': {},
  'drafts/:name/reopen': {},
  // Webhooks (issue 27): a subscription, a replay; DELETE sends the ':id' body (ignored).
  webhooks: { url: 'https://203.0.113.7/hook' },
  'webhooks/:id/replay': { after: 'main' },
};

/** Reads that need an editor key: webhook urls may carry a receiver's own secret (a chat hook's path). */
export const isEditorOnly = (route: Route) => route.path.startsWith(`${API}/webhooks`);

/** A body that would make a commit if the request got through. */
export function writeBody(path: string): unknown {
  const rest = path.slice(API.length + 1);
  const kind = /\/:id$/.test(rest)
    ? ':id'
    : /\/upsert-batch$/.test(rest)
      ? 'upsert-batch'
      : /\/share-links$/.test(rest)
        ? 'share-links'
        : rest;
  const body = WRITE_BODIES[kind];
  if (body === undefined) throw new Error(`No write body for ${path}: add it to the access matrix.`);
  return body;
}

/** Fills `:id` with the organization's resource of that kind; refuses routes it does not know. */
export function concrete(route: Route, ids: Record<string, string>): string {
  const match = /^\/api\/external\/(types?|tags?|attributes?|components?|diagrams?)\/:id$/.exec(route.path);
  if (match) return `${API}/${match[1]}/${ids[match[1]!.replace(/s$/, '')]}`;
  const shareLinks = /^\/api\/external\/(diagrams?)\/:id\/share-links$/.exec(route.path);
  if (shareLinks) return `${API}/${shareLinks[1]}/${ids.diagram}/share-links`;
  if (route.path === `${API}/share-links/:id`) return `${API}/share-links/${ids.shareLink}`;
  if (route.path === `${API}/components/:id/dependencies`) return `${API}/components/${ids.component}/dependencies`;
  // Search needs one filter (400 without); any matches for the matrix.
  if (route.path.startsWith(`${API}/search/`))
    return `${route.path}?${route.path.endsWith('/dependencies') ? 'componentId=x' : 'state=DRAFT'}`;
  // History and diff take revisions; `main` names one in every organization.
  if (route.path === `${API}/history/:commit`) return `${API}/history/main`;
  if (route.path === `${API}/diff`) return `${API}/diff?from=main`;
  // Every organization of the matrix has a draft of this name (populate).
  if (route.path.startsWith(`${API}/drafts/:name`)) return route.path.replace(':name', 'matrix');
  if (route.path.startsWith(`${API}/webhooks/:id`)) return route.path.replace(':id', ids.webhook!);
  if (route.path.includes(':')) throw new Error(`Route ${route.method} ${route.path} has a parameter the access matrix does not know.`);
  return route.path;
}

export interface Credentials {
  name: string;
  headers: Record<string, string>;
  status: 401;
  error: 'Missing API key.' | 'Invalid API key.';
}

/** Every way of presenting credentials that must be refused for organization `org`. */
export function refusedCredentials(
  acme: { key: string; readerKey: string; revokedKey: string; ghostKey: string },
  otherKey: string,
): Credentials[] {
  const invalid = (name: string, headers: Record<string, string>): Credentials => ({
    name,
    headers,
    status: 401,
    error: 'Invalid API key.',
  });
  const wrong = `c4s_${'A'.repeat(43)}`;
  const flipped = acme.key.slice(0, -1) + (acme.key.endsWith('A') ? 'B' : 'A');
  return [
    { name: 'no key', headers: {}, status: 401, error: 'Missing API key.' },
    { name: 'empty x-api-key', headers: { 'x-api-key': '' }, status: 401, error: 'Missing API key.' },
    invalid('Basic scheme', { authorization: `Basic ${Buffer.from(`acme:${acme.key}`).toString('base64')}` }),
    invalid('Bearer without a key', { authorization: 'Bearer' }),
    invalid('Bearer with two words', { authorization: `Bearer ${acme.key} ${acme.key}` }),
    invalid('key without scheme', { authorization: acme.key }),
    invalid('Token scheme', { authorization: `Token ${acme.key}` }),
    invalid('scheme inside x-api-key', { 'x-api-key': `Bearer ${acme.key}` }),
    invalid('key with a character changed', { authorization: `Bearer ${flipped}` }),
    invalid('key cut short', { 'x-api-key': acme.key.slice(0, -1) }),
    invalid('key with a suffix', { 'x-api-key': `${acme.key}x` }),
    invalid('not a key', { 'x-api-key': 'not-a-key' }),
    invalid('wrong key', { authorization: `Bearer ${wrong}` }),
    invalid('wrong key in x-api-key', { 'x-api-key': wrong }),
    invalid('revoked key', { authorization: `Bearer ${acme.revokedKey}` }),
    invalid('revoked key in x-api-key', { 'x-api-key': acme.revokedKey }),
    invalid('key of an organization that does not exist', { authorization: `Bearer ${acme.ghostKey}` }),
    invalid('both headers: acme and other', { authorization: `Bearer ${acme.key}`, 'x-api-key': otherKey }),
    invalid('both headers: other and acme', { authorization: `Bearer ${otherKey}`, 'x-api-key': acme.key }),
    invalid('both headers: editor and reader', { authorization: `Bearer ${acme.readerKey}`, 'x-api-key': acme.key }),
    invalid('both headers: valid and revoked', { authorization: `Bearer ${acme.key}`, 'x-api-key': acme.revokedKey }),
  ];
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

export async function send(url: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const response = await fetch(url + path, init);
  // An event stream never ends: what matters is that it was opened (and what it refused).
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    await response.body?.cancel();
    return { status: response.status, headers: response.headers, text: '' };
  }
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** Every id an organization's model holds (resources and their nested elements) and every commit id. */
export async function secretsOf(s: TestServer, key: string, gitdir: string): Promise<{ secrets: string[]; commits: string[] }> {
  const model = (await (await fetch(`${s.url}${API}/model`, { headers: { authorization: `Bearer ${key}` } })).json()) as Record<
    string,
    any[]
  >;
  const ids = new Set<string>();
  const collect = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(collect);
    else if (value !== null && typeof value === 'object') {
      for (const [field, child] of Object.entries(value)) {
        if (field === 'id' && typeof child === 'string') ids.add(child);
        collect(child);
      }
    }
  };
  collect(model);
  const { stdout } = await run('git', ['--git-dir', gitdir, 'rev-list', '--all']);
  const commits = stdout.trim().split('\n');
  return { secrets: [...ids, ...commits], commits };
}

/**
 * Every file under `dir` (recursively), read whole. A file gone between the listing and its
 * reading is left out: a server still running packs loose objects (their content is then in the
 * pack, read as a file of its own) and replaces temporary files.
 */
export async function allFiles(dir: string): Promise<Array<{ path: string; content: Buffer }>> {
  const files: Array<{ path: string; content: Buffer }> = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const content = await readFile(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (content !== null) files.push({ path, content });
  }
  return files;
}

/** The content of every object of a repository (loose or packed), as `git cat-file --batch-all-objects` prints it. */
export async function allObjects(gitdir: string): Promise<Buffer> {
  const { stdout } = await run('git', ['--git-dir', gitdir, 'cat-file', '--batch-all-objects', '--batch'], {
    encoding: 'buffer',
    maxBuffer: 1024 * 1024 * 1024,
  });
  return stdout as unknown as Buffer;
}

// ---------------------------------------------------------------------------------------------
// Two organizations in one data directory

async function created(url: string, key: string, path: string, body: unknown): Promise<any> {
  const reply = await send(url, 'POST', API + path, { authorization: `Bearer ${key}` }, body);
  if (reply.status !== 200) throw new Error(`${path}: ${reply.status} ${reply.text}`);
  return JSON.parse(reply.text);
}

/** A tag, an attribute, a component and a diagram named after the organization (`ACME-only …`). */
export async function populate(s: TestServer, slug: string, key: string, gitdir: string): Promise<OrgData> {
  const label = slug.toUpperCase();
  const tag = (await created(s.url, key, '/tag', [{ name: `${label}-only tag`, color: 'red', ref: `${slug}-tag` }]))[0];
  const attribute = (await created(s.url, key, '/attribute', [{ name: `${label}-only attribute`, type: 'STRING' }]))[0];
  const component = (
    await created(s.url, key, '/component', [
      {
        name: `${label}-only component`,
        typeSlug: 'container',
        ref: `${slug}-c`,
        attributes: [{ id: attribute.id, value: `${label}-only value` }],
      },
    ])
  )[0];
  const diagram = (
    await created(s.url, key, '/diagram', [
      {
        name: `${label}-only diagram`,
        level: 'C2',
        tags: [{ id: tag.id }],
        componentInstances: [
          { ref: 'a', component: component.id },
          { ref: 'b', placeholder: `${label}-only placeholder` },
        ],
        relations: [{ fromComponentInstance: 'a', toComponentInstance: 'b', label: `${label}-only relation` }],
      },
    ])
  )[0];
  const types = JSON.parse((await send(s.url, 'GET', `${API}/type`, { authorization: `Bearer ${key}` })).text);
  const shareLink = JSON.parse(
    (await send(s.url, 'POST', `${API}/diagram/${diagram.id}/share-links`, { authorization: `Bearer ${key}` }, {})).text,
  );
  // A draft at main's tip (no commit of its own): the draft routes read it.
  const draft = await send(s.url, 'POST', `${API}/drafts`, { authorization: `Bearer ${key}` }, { name: 'matrix' });
  if (draft.status !== 201) throw new Error(`/drafts: ${draft.status} ${draft.text}`);
  const hook = await send(s.url, 'POST', `${API}/webhooks`, { authorization: `Bearer ${key}` }, { url: 'https://203.0.113.7/hook' });
  if (hook.status !== 201) throw new Error(`/webhooks: ${hook.status} ${hook.text}`);
  const { secrets, commits } = await secretsOf(s, key, gitdir);
  return {
    slug,
    key,
    gitdir,
    secrets,
    commits,
    ids: {
      tag: tag.id,
      attribute: attribute.id,
      component: component.id,
      diagram: diagram.id,
      type: types[0].id,
      shareLink: shareLink.id,
      webhook: JSON.parse(hook.text).id,
    },
  };
}

export interface TwoOrgs {
  acme: OrgData;
  other: OrgData;
  revokedKey: string;
  ghostKey: string;
}

/**
 * Next to the server's `acme`: a revoked key of acme, a key of an organization that does not
 * exist, and a second organization `other` with its own key; both populated.
 */
export async function twoOrgs(s: TestServer): Promise<TwoOrgs> {
  const keys = new KeyStore(s.dataDir);
  const revoked = await keys.create('acme', { label: 'revoked one' });
  await keys.revoke('acme', revoked.record.id);
  const ghostKey = (await keys.create('ghost', { label: 'no such organization' })).key;
  await new Orgs(s.dataDir).create('other', {
    name: 'Other',
    members: ['eve@other.example'],
    author: { name: 'test', email: 'test@test' },
  });
  const otherKey = (await keys.create('other', { label: 'other pipeline' })).key;
  const acme = await populate(s, 'acme', s.key, s.gitdir);
  const other = await populate(s, 'other', otherKey, join(s.dataDir, 'orgs', 'other.git'));
  return { acme, other, revokedKey: revoked.key, ghostKey };
}

export const isRead = (route: Route) => route.method === 'GET' || route.method === 'HEAD';

/**
 * Every request of a route: as is, and for reads also `?at=` a commit of the organization: the
 * one its resources were made by, and (for lists, whose resources need not exist yet) its first.
 */
export function requestsOf(route: Route, org: OrgData): string[] {
  const path = concrete(route, org.ids);
  if (!isRead(route)) return [path];
  // A resource's own routes read it where it exists; lists also at the first commit, where they are empty.
  const single = /\/:id(\/dependencies)?$/.test(route.path) && !route.path.includes('/type');
  return [path, withAt(path, org.commits[0]!), ...(single ? [] : [withAt(path, org.commits.at(-1)!)])];
}

/** `path` with `?at=<commit>` (or `&at=` where it already has a query). */
export function withAt(path: string, commit: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}at=${commit}`;
}

/** Every route × every refused credential: 401, the exact text, `WWW-Authenticate: Bearer`. */
export async function refusalMatrix(
  s: TestServer,
  routes: Route[],
  orgs: TwoOrgs,
  answers: Answer[] = [],
): Promise<{ cells: number; violations: string[] }> {
  const credentials = refusedCredentials(
    { key: s.key, readerKey: s.readerKey, revokedKey: orgs.revokedKey, ghostKey: orgs.ghostKey },
    orgs.other.key,
  );
  const violations: string[] = [];
  let cells = 0;
  for (const route of routes) {
    for (const path of requestsOf(route, orgs.acme)) {
      for (const { name, headers, status, error } of credentials) {
        const answer = await send(s.url, route.method, path, headers, isRead(route) ? undefined : writeBody(route.path));
        answers.push(answer);
        cells++;
        const body = route.method === 'HEAD' ? '' : JSON.stringify({ error });
        if (answer.status !== status || answer.text !== body || answer.headers.get('www-authenticate') !== 'Bearer') {
          violations.push(`${route.method} ${path} with ${name}: ${answer.status} ${answer.text.slice(0, 200)}`);
        }
      }
    }
  }
  return { cells, violations };
}
