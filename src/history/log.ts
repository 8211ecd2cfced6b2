import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiError } from '../errors.js';
import { classifyPath, DIRECTORIES, kindOfId, ORGANIZATION_FILE, resourcePath, type StoredKind } from '../model/files.js';
import { isId } from '../model/ids.js';
import type { Model } from '../model/types.js';
import { resolveCommitName } from '../service/commit-names.js';
import { NotOnBranchError } from '../store/branches.js';
import { CatFile, runGit } from '../store/git-cli.js';
import { isoOfGitTime } from '../store/git-format.js';
import type { Repo } from '../store/repo.js';
import { parseYaml } from '../yaml/format.js';

/**
 * The history of `main` as `git log` tells it, with rename detection: a resource's file that
 * moved (the flat layout's `components/<id>.yaml` to its shard) keeps its history.
 */

export type ResourceAction = 'create' | 'update' | 'delete' | 'move';

export interface TouchedResource {
  kind: StoredKind | 'organization';
  id: string;
  name: string | null;
  action: ResourceAction;
  path: string;
}

export interface HistoryEntry {
  id: string;
  parents: string[];
  author: { name: string; email: string };
  time: string;
  summary: string;
  apiContext: string | null;
  resources: TouchedResource[];
}

export interface HistoryQuery {
  /** Start from this commit's first parent instead of from `main` (paging). */
  before?: string;
  /** Start from this commit instead of `main` (a draft's head). */
  tip?: string;
  /** Only the commits after this one (it and its ancestors left out). */
  after?: string;
  since?: string;
  until?: string;
  limit: number;
  /** Only commits that touched one of these paths. */
  paths?: readonly string[];
  /** From `rev` itself, one commit only (`GET /history/<commit>`). */
  single?: string;
  /** Exactly these commits, in this order, each against its first parent (the change feed, src/events/feed.ts). */
  commits?: readonly string[];
}

// The author's time raw (`--date=raw`): git's %aI fails the whole log on a time before the epoch in its zone.
const FORMAT = '%x1e%H%x1f%P%x1f%an%x1f%ae%x1f%ad%x1f%s%x1f%(trailers:key=Api-Context,separator=%x1d)%x1f%ct%x1f';

const ACTIONS: Record<string, ResourceAction> = { A: 'create', M: 'update', T: 'update', D: 'delete', R: 'move', C: 'create' };

interface RawChange {
  action: ResourceAction;
  path: string;
  blob: string;
}

/**
 * The paths a resource's file can have had: in the current layout, and flat (before the layout
 * move) for components and diagrams. With its kind known (it is in the current model), those of
 * that kind alone; otherwise (a deleted resource) those of every kind, since ids are unique
 * across the organization and only one kind's paths can ever have held it.
 */
export function pathsOfResource(id: string, kind?: StoredKind): string[] {
  const paths = new Set<string>();
  for (const each of kind === undefined ? (Object.keys(DIRECTORIES) as StoredKind[]) : [kind]) {
    paths.add(resourcePath(each, id));
    paths.add(`${DIRECTORIES[each]}/${id}.yaml`);
  }
  return [...paths];
}

/** The paths of a history's `resource` (an id, of a resource of `model` or a deleted one); 400 for what is no id. */
export function pathsOfResourceNamed(resource: string, model: Model): string[] {
  if (!isId(resource)) throw new ApiError(400, `Invalid resource id '${resource}'.`);
  return pathsOfResource(resource, kindOfId(model, resource));
}

const FIELD_COUNT = 8;

/** The first `Api-Context` trailer, as git prints it (`Api-Context: …`): "" when empty, null when there is none, as the change feed reads it. */
function apiContextOf(trailers: string): string | null {
  if (trailers === '') return null;
  return trailers
    .split('\x1d')[0]!
    .replace(/^[^:]*:\s*/, '')
    .trim();
}

/**
 * A branch's history is its first-parent chain, as the change feed's (CONTRACT §9): the commits
 * made on it, a merge being one commit that brings what the merged branch changed (its changes
 * are those against the first parent). So the history of a resource shows a delete on main and
 * the merge that brought the resource back, and a page's `before` continues exactly where it
 * ended: a walk of every parent listed the merged drafts' commits between main's, and resumed
 * from the last one's parents it lost those of main older than the draft's.
 */
export async function readHistory(gitdir: string, query: HistoryQuery): Promise<HistoryEntry[]> {
  if (query.before !== undefined && !(await hasParent(gitdir, query.before))) return [];
  const paths = query.paths ?? [];
  // git reads the commit graph's changed-path Bloom filters only for a pathspec of one item:
  // with several, it diffs the trees of every commit (seconds on 20,000 commits). So one git log
  // per path, side by side, merged; the paths of one resource never hold it in the same commit,
  // except the layout move, which git then shows as a delete and a create, merged back into one move.
  // Without a commit graph (a repository never packed) there are no filters, and one walk over
  // every path costs less than one walk per path.
  const split = paths.length > 1 && (await hasCommitGraph(gitdir));
  const logs = split ? await Promise.all(paths.map((path) => gitLog(gitdir, query, [path]))) : [await gitLog(gitdir, query, paths)];
  const found = logs.filter((log) => log.length > 0);
  if (found.length <= 1) return withNames(gitdir, found[0] ?? []);
  // Several logs, in the order of the walk: a commit's place on the chain, not its committer time,
  // which a pushed commit made on a clock running ahead puts before its own descendants.
  const walked = query.single === undefined && query.commits === undefined;
  return withNames(gitdir, mergeLogs(found, query.limit, walked ? await placesOnWalk(gitdir, query) : undefined));
}

/** Where gitLog's walk starts: the branch's tip, or the commit before a page's `before`. */
function walkStart(query: HistoryQuery): string {
  return query.before === undefined ? (query.tip ?? 'refs/heads/main') : `${query.before}^1`;
}

/** Each commit of gitLog's walk (its first-parent chain, `after` left out) by its place on it: 0 the newest. */
async function placesOnWalk(gitdir: string, query: HistoryQuery): Promise<Map<string, number>> {
  const args = ['rev-list', '--first-parent', walkStart(query)];
  if (query.after !== undefined) args.push(`^${query.after}`);
  const { stdout } = await runGit(gitdir, [...args, '--']);
  const places = new Map<string, number>();
  for (const [place, id] of stdout.toString('utf8').split('\n').entries()) if (id !== '') places.set(id, place);
  return places;
}

/** Whether git has a commit graph for the repository (written after packing: store/maintenance.ts). */
async function hasCommitGraph(gitdir: string): Promise<boolean> {
  const info = join(gitdir, 'objects', 'info');
  for (const file of [join(info, 'commit-graph'), join(info, 'commit-graphs', 'commit-graph-chain')]) {
    if (
      await access(file).then(
        () => true,
        () => false,
      )
    )
      return true;
  }
  return false;
}

/**
 * Whether `commit` is a state the branch at `tip` has had: a commit of its first-parent chain
 * (a merged draft's own commits are not). git walks only from `tip` back to `commit`, not the
 * whole chain: the oldest commit of `commit..tip` along first parents has `commit` as its first
 * parent exactly when `commit` is on the chain.
 */
export async function onFirstParentChain(gitdir: string, commit: string, tip: string): Promise<boolean> {
  const { stdout } = await runGit(gitdir, ['rev-list', '--first-parent', '--parents', `${commit}..${tip}`, '--']);
  const lines = stdout.toString('utf8').trimEnd();
  if (lines === '') {
    const { stdout: tipId } = await runGit(gitdir, ['rev-parse', '--verify', '--end-of-options', `${tip}^{commit}`]);
    return tipId.toString('utf8').trim() === commit;
  }
  return lines.slice(lines.lastIndexOf('\n') + 1).split(' ')[1] === commit;
}

/**
 * The commit a page of a branch's history goes on after (`before`): a revision that names a
 * commit of the branch's first-parent chain, `tip` (the branch `ref` holds, or its commit as
 * read); anything else is 404, as the change feed answers a cursor off the chain.
 */
export async function pageStart(repo: Repo, named: string, tip: string, ref: string): Promise<string> {
  const commit = await resolveCommitName(repo, named);
  if (!(await onFirstParentChain(repo.gitdir, commit, tip))) throw new ApiError(404, new NotOnBranchError(named, ref).message);
  return commit;
}

async function hasParent(gitdir: string, commit: string): Promise<boolean> {
  const { code } = await runGit(gitdir, ['rev-parse', '--verify', '--quiet', `${commit}^1^{commit}`], { okCodes: [1] });
  return code === 0;
}

async function gitLog(gitdir: string, query: HistoryQuery, paths: readonly string[]): Promise<ParsedEntry[]> {
  const args = [
    'log',
    `--format=${FORMAT}`,
    '--raw',
    '--no-abbrev',
    '-z',
    '-M',
    '--diff-merges=first-parent',
    '--date=raw',
    `--max-count=${query.limit}`,
  ];
  // As seconds since the epoch, within 1970–2038: git's own date parsing misreads some ISO forms
  // and far-future times (an @-time past 2099 filters nothing). With its zone: git reads a bare
  // `@0` as no time at all (since=@0 then kept nothing, until=@0 everything).
  const seconds = (iso: string) => Math.min(Math.floor(Date.parse(iso) / 1000), 2 ** 31 - 1);
  const gitTime = (iso: string) => `@${Math.max(seconds(iso), 0)} +0000`;
  // git keeps no commit time before the epoch: a bound before it leaves no commit.
  if (query.until !== undefined && seconds(query.until) < 0) return [];
  if (query.since !== undefined) args.push(`--since=${gitTime(query.since)}`);
  if (query.until !== undefined) args.push(`--until=${gitTime(query.until)}`);
  if (query.single !== undefined) args.push('--no-walk', query.single);
  else if (query.commits !== undefined) args.push('--no-walk=unsorted', ...query.commits);
  else args.push('--first-parent', walkStart(query));
  if (query.after !== undefined) args.push(`^${query.after}`);
  args.push('--', ...paths);
  const { stdout } = await runGit(gitdir, args);
  return parseLog(stdout.toString('utf8'));
}

/**
 * Several logs of one walk (each newest first) as one, newest first: by each commit's place on the
 * walk (`places`, placesOnWalk), else (commits given one by one) by committer time and, for commits
 * of one second, in the order of the logs given; a commit in several logs once, with all its
 * changes (a delete and a create of the same content: the move they are).
 */
function mergeLogs(logs: ParsedEntry[][], limit: number, places?: ReadonlyMap<string, number>): ParsedEntry[] {
  const byId = new Map<string, ParsedEntry>();
  for (const log of logs) {
    for (const entry of log) {
      const known = byId.get(entry.id);
      if (known) known.changes = asMoves([...known.changes, ...entry.changes]);
      else byId.set(entry.id, { ...entry, changes: [...entry.changes] });
    }
  }
  const order = new Map<string, number>();
  for (const [which, log] of logs.entries()) {
    for (const [at, entry] of log.entries()) if (!order.has(entry.id)) order.set(entry.id, which * 1e9 + at);
  }
  const byPlace = (a: ParsedEntry, b: ParsedEntry) => (places!.get(a.id) ?? Infinity) - (places!.get(b.id) ?? Infinity);
  const byTime = (a: ParsedEntry, b: ParsedEntry) => b.committed - a.committed || order.get(a.id)! - order.get(b.id)!;
  return [...byId.values()].sort(places === undefined ? byTime : (a, b) => byPlace(a, b) || byTime(a, b)).slice(0, limit);
}

function asMoves(changes: RawChange[]): RawChange[] {
  const deleted = changes.filter((c) => c.action === 'delete');
  const created = changes.filter((c) => c.action === 'create');
  if (deleted.length !== 1 || created.length !== 1 || deleted[0]!.blob !== created[0]!.blob) return changes;
  return [...changes.filter((c) => c !== deleted[0] && c !== created[0]), { ...created[0]!, action: 'move' }];
}

type ParsedEntry = ReturnType<typeof parseLog>[number];

function parseLog(text: string): Array<Omit<HistoryEntry, 'resources'> & { changes: RawChange[]; committed: number }> {
  const entries = [];
  for (const record of text.split('\x1e')) {
    if (record === '') continue;
    const fields = record.split('\x1f');
    const [id, parents, name, email, time, summary, contexts, committed] = fields;
    const tokens = fields.slice(FIELD_COUNT).join('\x1f').split('\0');
    const changes: RawChange[] = [];
    for (let i = 0; i < tokens.length; i++) {
      const meta = tokens[i].replace(/^\n/, '');
      if (!meta.startsWith(':')) continue;
      const [, , oldBlob, newBlob, status] = meta.slice(1).split(' ');
      const letter = status[0];
      if (letter === 'R' || letter === 'C') {
        changes.push({ action: ACTIONS[letter], path: tokens[i + 2], blob: newBlob });
        i += 2;
      } else {
        changes.push({ action: ACTIONS[letter] ?? 'update', path: tokens[i + 1], blob: letter === 'D' ? oldBlob : newBlob });
        i += 1;
      }
    }
    entries.push({
      id,
      parents: parents === '' ? [] : parents.split(' '),
      author: { name, email },
      time: isoOfGitTime(...(time.split(' ') as [string, string])),
      summary,
      apiContext: apiContextOf(contexts),
      committed: Number(committed),
      changes,
    });
  }
  return entries;
}

/** Each touched model file with the name its resource had then (for a delete, before it). */
async function withNames(gitdir: string, entries: ReturnType<typeof parseLog>): Promise<HistoryEntry[]> {
  const catFile = entries.some((e) => e.changes.length > 0) ? new CatFile(gitdir) : undefined;
  try {
    const result: HistoryEntry[] = [];
    for (const { changes, committed: _, ...entry } of entries) {
      const resources: TouchedResource[] = [];
      for (const change of changes) {
        const place = change.path === ORGANIZATION_FILE ? 'organization' : classifyPath(change.path);
        if (place === null) continue;
        const kind = place === 'organization' ? 'organization' : place.kind;
        const id = place === 'organization' ? 'organization' : place.id;
        resources.push({ kind, id, name: await nameIn(catFile!, change.blob), action: change.action, path: change.path });
      }
      result.push({ ...entry, resources });
    }
    return result;
  } finally {
    catFile?.close();
  }
}

async function nameIn(catFile: CatFile, blob: string): Promise<string | null> {
  const content = await catFile.read(blob);
  if (content === null) return null;
  try {
    const value = parseYaml(content.toString('utf8')) as { name?: unknown } | null;
    return typeof value?.name === 'string' ? value.name : null;
  } catch {
    return null;
  }
}
