import { relative, sep } from 'node:path';
import { type FileProblem, loadModel } from '../model/load.js';
import { lineOf } from './lines.js';
import { modelFilesOf, readFolderFile } from './directory.js';

/**
 * `c4store check [DIR]`: a directory in the repository layout against every model rule, by
 * the code that checks every commit the service serves and every push (`loadModel`), so the
 * two never disagree; unlike a load, which stops at the first problem, every problem is listed.
 */

export interface Problem {
  /** The file's path in the repository, `/`-separated. */
  file: string;
  line: number;
  message: string;
}

export interface CheckReport {
  files: number;
  problems: Problem[];
}

/** Files between two progress lines; a repository of fewer files prints none. */
export const PROGRESS_EVERY = 5000;

export async function checkDirectory(dir: string, progress: (line: string) => void = () => {}): Promise<CheckReport> {
  const { files, shapeProblems } = await modelFilesOf(dir);
  const texts = new Map<string, string>();
  let done = 0;
  const collect = { problems: [] as FileProblem[] };
  // The path of each file is its own handle (directory.ts), so a read knows which file it is.
  await loadModel(
    files,
    {
      // A folder is checked as a push of it would be.
      incoming: true,
      read: async (full) => {
        const path = relative(dir, full).split(sep).join('/');
        const text = await readFolderFile(full, path);
        texts.set(path, text);
        if (++done % PROGRESS_EVERY === 0) progress(`checked ${done} of ${files.size} files`);
        return text;
      },
    },
    collect,
  );
  const problems: Problem[] = [...shapeProblems].map(([file, message]) => ({ file, line: 1, message }));
  for (const { path, message, field } of collect.problems) {
    // A schema message lists every failing field (`a: …, b.c: …`): one problem, and one line, each.
    const parts = field === undefined ? message.split(/, (?=[A-Za-z0-9_.]+: )/) : [message];
    for (const part of parts) {
      problems.push({ file: path, line: lineOf(texts.get(path) ?? '', part, field), message: part.split('\n')[0].trim() });
    }
  }
  problems.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line));
  return { files: files.size, problems };
}
