import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { classifyPath, ORGANIZATION_FILE } from '../model/files.js';

/**
 * The model files of a directory in the repository layout (a clone, or sample-repo/) as
 * `loadModel` reads a git tree: repository path → a handle, here the file's own path. Which
 * files belong to the model is `classifyPath`'s call, the same as for a commit's tree.
 */
export async function modelFilesOf(dir: string): Promise<Map<string, string>> {
  const files: string[] = [];
  const visit = async (folder: string): Promise<void> => {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      if (entry.name === '.git') continue;
      const full = join(folder, entry.name);
      if (entry.isDirectory()) await visit(full);
      else if (entry.isFile()) files.push(relative(dir, full).split(sep).join('/'));
    }
  };
  await visit(dir);
  // Tree order (byte order of paths), as git lists a tree: ids then come in creation order.
  files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const owned = new Map<string, string>();
  for (const path of files) {
    if (path === ORGANIZATION_FILE || classifyPath(path) !== null) owned.set(path, join(dir, path));
  }
  return owned;
}
