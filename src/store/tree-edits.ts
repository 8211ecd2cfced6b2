/**
 * Applying file changes to a tree: the changes become edits per directory, and only the trees
 * on the paths they touch are rewritten (every other subtree is kept by its oid). Reads the
 * base trees and writes new blobs and trees through object storage.
 */
import type { ObjectStore, ObjectWriter } from './object-storage.js';
import { BLOB_MODES, DIR_MODE, FILE_MODE, type TreeEntry, compareTreeNames, isDirMode, isOid, makeTreeEntry } from './git-format.js';
import { nextIoSlice } from './sync-io.js';

/** content null deletes the file. */
export interface FileChange {
  path: string;
  content: string | null;
}

/**
 * A blob the repository already holds, put at `path`: a file moved elsewhere keeps its blob,
 * so git sees a rename with nothing else changed. `mode`: one of BLOB_MODES (default `100644`),
 * so that a file merged in from another branch stays executable, or a symbolic link.
 */
export interface BlobPlacement {
  path: string;
  blob: string;
  mode?: string;
}

export type TreeChange = FileChange | BlobPlacement;

/**
 * Pending edits of one tree, by entry name: its files' (new content, null: delete; or an existing
 * blob) and its subtrees' edits. One name may be in both, when a folder becomes a file (every
 * file in it deleted, the file put) or a file a folder.
 */
export interface TreeEdits {
  files: Map<string, FileEdit>;
  folders: Map<string, TreeEdits>;
}
type FileEdit = { content: string | null } | { blob: string; mode: string };

const FORBIDDEN_SEGMENTS = new Set(['', '.', '..']);

export class PathConflictError extends Error {
  constructor(name: string, what: string) {
    super(`Cannot write '${name}': it ${what} in the current tree.`);
    this.name = 'PathConflictError';
  }
}

/**
 * The oid of the tree `base` (null: none) with `edits` (see toTreeEdits) applied, its new blobs
 * and trees written by `writer`; an empty result is written as git's empty tree. A file put where
 * a directory stays, or files put under a file that stays, throws PathConflictError: a directory
 * becomes a file only when the edits delete every file in it, and a file a directory only when
 * they delete the file.
 */
export async function writeEditedTree(objects: ObjectStore, writer: ObjectWriter, base: string | null, edits: TreeEdits): Promise<string> {
  return (await rewriteTree(objects, writer, base, edits)) ?? (await writer.writeTree([]));
}

/** Returns the new tree's oid, or null when it ends up empty (empty trees are dropped). */
async function rewriteTree(objects: ObjectStore, writer: ObjectWriter, baseOid: string | null, edits: TreeEdits): Promise<string | null> {
  const base = baseOid ? await objects.readTree(baseOid) : [];
  // One entry after the other: a blob is only hashed here (the writer stores it in the
  // background), and a commit of 45,000 new files hashes them a slice of the event loop at a time.
  const updates: Array<{ name: string; nameBytes: Buffer; mode: string; oid: string | null }> = [];
  for (const [name, edit] of edits.folders) {
    await nextIoSlice();
    const nameBytes = Buffer.from(name, 'utf8');
    const at = findEntry(base, nameBytes, true);
    const oid = await rewriteTree(objects, writer, at.found ? base[at.index]!.oid : null, edit);
    updates.push({ name, nameBytes, mode: DIR_MODE, oid });
  }
  for (const [name, edit] of edits.files) {
    await nextIoSlice();
    const nameBytes = Buffer.from(name, 'utf8');
    if ('blob' in edit) updates.push({ name, nameBytes, mode: edit.mode, oid: edit.blob });
    else if (edit.content === null) updates.push({ name, nameBytes, mode: FILE_MODE, oid: null });
    else updates.push({ name, nameBytes, mode: FILE_MODE, oid: await writer.write('blob', Buffer.from(edit.content, 'utf8')) });
  }
  const entries = [...base];
  for (const { name, nameBytes, mode, oid } of updates) {
    const at = findEntry(entries, nameBytes, isDirMode(mode));
    if (oid !== null) entries.splice(at.index, at.found ? 1 : 0, makeTreeEntry(mode, name, oid));
    else if (at.found) entries.splice(at.index, 1);
  }
  // A name is a file or a directory, never both (git fsck: duplicateEntries).
  for (const { name, nameBytes, mode, oid } of updates) {
    const isDir = isDirMode(mode);
    if (oid !== null && findEntry(entries, nameBytes, !isDir).found)
      throw new PathConflictError(name, isDir ? 'is a file' : 'is a directory');
  }
  return entries.length === 0 ? null : writer.writeTree(entries);
}

/**
 * The changes grouped by directory; throws on an invalid path or a path changed twice. A file put
 * where the same changes put files under it is refused when the tree is written (PathConflictError).
 */
export async function toTreeEdits(changes: readonly TreeChange[]): Promise<TreeEdits> {
  const root: TreeEdits = { files: new Map(), folders: new Map() };
  const seen = new Set<string>();
  for (const change of changes) {
    await nextIoSlice();
    const segments = checkedSegments(change.path);
    if (seen.has(change.path)) throw new Error(`Path '${change.path}' is changed twice in one commit.`);
    seen.add(change.path);
    let level = root;
    for (const dir of segments.slice(0, -1)) {
      let next = level.folders.get(dir);
      if (next === undefined) level.folders.set(dir, (next = { files: new Map(), folders: new Map() }));
      level = next;
    }
    const leaf = segments[segments.length - 1]!;
    if ('blob' in change && !isOid(change.blob)) throw new Error(`Not a blob id for '${change.path}': ${String(change.blob)}`);
    const mode = ('blob' in change ? change.mode : undefined) ?? FILE_MODE;
    if (!BLOB_MODES.has(mode)) throw new Error(`Not a file's mode for '${change.path}': ${mode}`);
    level.files.set(leaf, 'blob' in change ? { blob: change.blob, mode } : { content: change.content });
  }
  return root;
}

function checkedSegments(filePath: string): string[] {
  const segments = typeof filePath === 'string' ? filePath.split('/') : [''];
  for (const segment of segments) {
    if (FORBIDDEN_SEGMENTS.has(segment) || segment.includes('\0') || segment.toLowerCase() === '.git') {
      throw new Error(`Invalid path in repository: '${String(filePath)}'.`);
    }
  }
  return segments;
}

interface Position {
  found: boolean;
  index: number;
}

function findEntry(entries: readonly TreeEntry[], nameBytes: Buffer, isDir: boolean): Position {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const entry = entries[middle]!;
    const order = compareTreeNames(entry.nameBytes, isDirMode(entry.mode), nameBytes, isDir);
    if (order === 0) return { found: true, index: middle };
    if (order < 0) low = middle + 1;
    else high = middle;
  }
  return { found: false, index: low };
}
