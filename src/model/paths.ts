import { hash } from 'node:crypto';
import { isId } from './ids.js';

/**
 * Where each resource lives in the repository, and the reverse: every path the model writes,
 * loads, names in a commit message or checks goes through resourcePath and classifyPath.
 *
 * Components and diagrams are sharded: `components/<shard>/<id>.yaml`, where `<shard>` is the
 * first two hex digits of the SHA-256 of the id (docs/api.md, "Repository layout and
 * sharding", gives the reasons). Types, tags and attributes stay flat (`tags/<id>.yaml`).
 * Repositories made before sharding hold `components/<id>.yaml`: such a tree is read as it
 * is, and moved to the sharded layout in one commit (src/service/layout-upgrade.ts).
 */

export const ORGANIZATION_FILE = 'organization.yaml';
export const DIRECTORIES = {
  type: 'types',
  tag: 'tags',
  attribute: 'attributes',
  component: 'components',
  diagram: 'diagrams',
} as const;
export type StoredKind = keyof typeof DIRECTORIES;

export const SHARDED_KINDS: ReadonlySet<StoredKind> = new Set(['component', 'diagram']);
/** Two hex digits: 256 directories, each under 2,000 entries at 500,000 resources of a kind. */
const SHARD_LENGTH = 2;

/** How a tree places components and diagrams: in shard directories, or directly in their folder (before sharding). */
export type TreeLayout = 'sharded' | 'flat';

export function shardOf(id: string): string {
  // crypto.hash, one call: a third of createHash's time on short ids (every resource of a load asks).
  return hash('sha256', id, 'hex').slice(0, SHARD_LENGTH);
}

/** The one path of a resource in a repository of the given layout (default: the current one). */
export function resourcePath(kind: StoredKind, id: string, layout: TreeLayout = 'sharded'): string {
  if (!isId(id)) throw new Error(`Refusing to build a path from id ${JSON.stringify(id)}`);
  if (layout === 'sharded' && SHARDED_KINDS.has(kind)) return `${DIRECTORIES[kind]}/${shardOf(id)}/${id}.yaml`;
  return `${DIRECTORIES[kind]}/${id}.yaml`;
}

export interface PathPlace {
  kind: StoredKind;
  /** The file name without `.yaml`; not checked to be an id here. */
  id: string;
  /** Whether the file sits in a shard directory of its kind's folder (`components/<shard>/<id>.yaml`). */
  inSubdirectory: boolean;
}

// A shard directory is two lowercase hex digits; other folders inside a kind's folder are not
// c4store's, and are left alone as they always were.
const RESOURCE_FILE = /^([a-z]+)\/(?:([0-9a-f]{2})\/)?([^/]+)\.yaml$/;
const KIND_OF_DIRECTORY = new Map(Object.entries(DIRECTORIES).map(([kind, dir]) => [dir as string, kind as StoredKind]));

/**
 * Where a path belongs in the model, or null for files c4store does not own (README, …).
 * A resource file is recognised directly in its kind's folder or in a shard directory of it,
 * in the right one or not: whether it is where it belongs is placementProblem's question.
 */
export function classifyPath(path: string): PathPlace | 'organization' | null {
  if (path === ORGANIZATION_FILE) return 'organization';
  const match = RESOURCE_FILE.exec(path);
  const kind = match && KIND_OF_DIRECTORY.get(match[1]!);
  if (!match || !kind) return null;
  return { kind, id: match[3]!, inSubdirectory: match[2] !== undefined };
}

/**
 * The layout of a tree: sharded as soon as one component or diagram sits in a shard
 * directory; flat when some sit directly in their folder and none in a shard. A tree with no
 * component and no diagram is sharded (it is valid either way).
 */
export function layoutOf(paths: Iterable<string>): TreeLayout {
  let flat = false;
  for (const path of paths) {
    const place = classifyPath(path);
    if (place === null || place === 'organization' || !SHARDED_KINDS.has(place.kind)) continue;
    if (place.inSubdirectory) return 'sharded';
    flat = true;
  }
  return flat ? 'flat' : 'sharded';
}

/** Why the resource file at `path` is not where a tree of `layout` keeps it, naming the right path; null if it is. */
export function placementProblem(path: string, place: PathPlace, layout: TreeLayout): string | null {
  const expected = resourcePath(place.kind, place.id, layout);
  if (path === expected) return null;
  return `the file is in the wrong place: it belongs at ${expected}`;
}

/** Folders the store writes into: a file in the place of one would make every later write there fail. */
const STORE_FOLDER = /^(?:types|tags|attributes|components|diagrams|\.c4store|\.c4store\/schemas|(?:components|diagrams)\/[0-9a-f]{2})$/;
const TREE_MODE = '040000';
const FILE_MODE = '100644';

/**
 * Why an entry of a pushed tree (path, git mode) is not as the store would write it, or null:
 * a folder the store writes into must be a folder, a file the store reads or writes (a
 * resource, organization.yaml, a schema) a plain file, and no other entry may differ from one
 * of those only in case. Other entries are not c4store's.
 */
export function treeEntryProblem(path: string, mode: string): string | null {
  if (STORE_FOLDER.test(path)) {
    return mode === TREE_MODE ? null : `${path}: c4store keeps a folder here; a file in its place would make every write into it fail.`;
  }
  const owned = isOwned(path);
  if (owned && mode !== FILE_MODE) {
    return `${path}: must be a plain file (mode ${FILE_MODE}) as c4store writes it, not ${mode === TREE_MODE ? 'a folder' : `mode ${mode}`}.`;
  }
  // `Organization.yaml` beside organization.yaml, `Types/` beside types/: c4store reads neither,
  // but a clone on macOS or Windows checks both out into one file or folder, so the model there
  // is not the one served (and `c4store check` of it says nothing of the difference).
  const folded = path.toLowerCase();
  if (!owned && folded !== path && (STORE_FOLDER.test(folded) || isOwned(folded))) {
    return `${path}: differs only in case from c4store's ${folded}: a clone on macOS or Windows makes one of the two, and the model checked out there is not the one served.`;
  }
  return null;
}

/** A file c4store reads or writes: organization.yaml, a resource file, a schema. */
function isOwned(path: string): boolean {
  return path.startsWith('.c4store/schemas/') || classifyPath(path) !== null;
}
