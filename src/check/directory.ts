import { lstat, readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { DEFAULT_BODY_LIMIT, fileTooLarge } from '../limits/limits.js';
import { classifyPath, FileError, ORGANIZATION_FILE } from '../model/files.js';
import { treeEntryProblem } from '../model/paths.js';

/** A directory in the repository layout, read as git would commit it. */
export interface ModelFolder {
  /** The model files as `loadModel` reads a git tree: repository path → a handle, here the file's own path. */
  files: Map<string, string>;
  /**
   * Entries git would commit in a shape the store never writes (treeEntryProblem: a symlink or
   * an executable file where a model file goes, a file where c4store keeps a folder): a push of
   * them is refused, so `check` says so too. Repository path → why.
   */
  shapeProblems: Map<string, string>;
}

/**
 * The model files of a directory in the repository layout (a clone, or sample-repo/). Which
 * files belong to the model is `classifyPath`'s call, the same as for a commit's tree; each
 * entry gets the git mode a commit of it would have (040000, 120000, 100755 or 100644).
 */
export async function modelFilesOf(dir: string): Promise<ModelFolder> {
  const files: string[] = [];
  const shapeProblems = new Map<string, string>();
  const visit = async (folder: string): Promise<void> => {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      if (entry.name === '.git') continue;
      const full = join(folder, entry.name);
      const path = relative(dir, full).split(sep).join('/');
      const mode = entry.isDirectory()
        ? '040000'
        : entry.isSymbolicLink()
          ? '120000'
          : entry.isFile() && ownedFile(path) && ((await lstat(full)).mode & 0o111) !== 0
            ? '100755'
            : '100644';
      const problem = treeEntryProblem(path, mode);
      if (problem !== null) shapeProblems.set(path, problem.slice(`${path}: `.length));
      if (entry.isDirectory()) await visit(full);
      else if (entry.isFile()) files.push(path);
    }
  };
  await visit(dir);
  // Tree order (byte order of paths), as git lists a tree: ids then come in creation order.
  files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const owned = new Map<string, string>();
  for (const path of files) if (ownedFile(path)) owned.set(path, join(dir, path));
  return { files: owned, shapeProblems };
}

/**
 * The text of a folder's model file (`full`, at `path` in the repository), held to what a push
 * of it meets: one larger than a push may bring is refused by its size and never read (one of
 * hundreds of megabytes is past the longest string a read can make: 'Invalid string length').
 */
export async function readFolderFile(full: string, path: string): Promise<string> {
  const { size } = await stat(full);
  if (size > DEFAULT_BODY_LIMIT) throw new FileError(path, fileTooLarge(size));
  return readFile(full, 'utf8');
}

function ownedFile(path: string): boolean {
  return path === ORGANIZATION_FILE || classifyPath(path) !== null;
}
