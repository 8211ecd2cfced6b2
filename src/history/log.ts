import { classifyPath, DIRECTORIES, ORGANIZATION_FILE, resourcePath, type StoredKind } from '../model/files.js';
import { CatFile, runGit } from '../store/git-cli.js';
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
  /** Start from this commit's parents instead of from `main` (paging). */
  before?: string;
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

const FORMAT = '%x1e%H%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%s%x1f%(trailers:key=Api-Context,valueonly,separator=%x1d)%x1f';

const ACTIONS: Record<string, ResourceAction> = { A: 'create', M: 'update', T: 'update', D: 'delete', R: 'move', C: 'create' };

interface RawChange {
  action: ResourceAction;
  path: string;
  blob: string;
}

/** The paths a resource's file can have had: flat, and in whatever layout it has now, for every kind. */
export function pathsOfResource(id: string): string[] {
  const paths = new Set<string>();
  for (const kind of Object.keys(DIRECTORIES) as StoredKind[]) {
    paths.add(`${DIRECTORIES[kind]}/${id}.yaml`);
    paths.add(resourcePath(kind, id));
  }
  return [...paths];
}

export async function readHistory(gitdir: string, query: HistoryQuery): Promise<HistoryEntry[]> {
  const args = ['log', `--format=${FORMAT}`, '--raw', '--no-abbrev', '-z', '-M', `--max-count=${query.limit}`];
  // As seconds since the epoch, within 1970–2038: git's own date parsing misreads some ISO forms
  // and far-future times (an @-time past 2099 filters nothing).
  const seconds = (iso: string) => Math.min(Math.max(Math.floor(Date.parse(iso) / 1000), 0), 2 ** 31 - 1);
  if (query.since !== undefined) args.push(`--since=@${seconds(query.since)}`);
  if (query.until !== undefined) args.push(`--until=@${seconds(query.until)}`);
  if (query.single !== undefined) args.push('--no-walk', query.single);
  else if (query.commits !== undefined) args.push('--no-walk=unsorted', '--diff-merges=first-parent', ...query.commits);
  else args.push(query.before === undefined ? 'refs/heads/main' : `${query.before}^@`);
  args.push('--');
  if (query.paths) args.push(...query.paths);
  const { stdout } = await runGit(gitdir, args);
  const parsed = parseLog(stdout.toString('utf8'));
  return withNames(gitdir, parsed);
}

function parseLog(text: string): Array<Omit<HistoryEntry, 'resources'> & { changes: RawChange[] }> {
  const entries = [];
  for (const record of text.split('\x1e')) {
    if (record === '') continue;
    const fields = record.split('\x1f');
    const [id, parents, name, email, time, summary, contexts] = fields;
    const tokens = fields.slice(7).join('\x1f').split('\0');
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
      time,
      summary,
      apiContext: contexts === '' ? null : contexts.split('\x1d')[0],
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
    for (const { changes, ...entry } of entries) {
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
