import { readFile } from 'node:fs/promises';
import { classifyPath, collectionOf, emptyModel, FileError, ORGANIZATION_FILE, resourcePath } from '../model/files.js';
import { organizationOfFile, resourceOfFile } from '../model/load.js';
import { modelProblems } from '../model/rules.js';
import type { Organization } from '../model/types.js';
import { lineOf } from './lines.js';
import { modelFilesOf } from './directory.js';

/**
 * `c4store check [DIR]`: a directory in the repository layout against every model rule, with
 * the service's own code — each file through `resourceOfFile` (shape, id) as `loadModel` reads
 * it, then the files that hold a resource through `modelProblems`, the rules `checkModel` runs
 * before a commit is served. Unlike a load, which stops at the first problem, every problem
 * is listed.
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
  const files = await modelFilesOf(dir);
  const problems: Problem[] = [];
  const texts = new Map<string, string>();
  const report = (file: string, message: string) => {
    // A schema message lists every failing field (`a: …, b.c: …`): one problem, and one line, each.
    for (const part of message.split(/, (?=[A-Za-z0-9_.]+: )/)) {
      const text = texts.get(file) ?? '';
      problems.push({ file, line: lineOf(text, part), message: part.split('\n')[0].trim() });
    }
  };
  const unwrap = (file: string, err: unknown) => {
    if (!(err instanceof FileError)) throw err;
    report(file, err.message.slice(file.length + 2));
  };

  let organization: Organization | undefined;
  const organizationFile = files.get(ORGANIZATION_FILE);
  if (organizationFile === undefined) {
    problems.push({ file: ORGANIZATION_FILE, line: 1, message: 'missing' });
  } else {
    texts.set(ORGANIZATION_FILE, await readFile(organizationFile, 'utf8'));
    try {
      organization = organizationOfFile(texts.get(ORGANIZATION_FILE) as string);
    } catch (err) {
      unwrap(ORGANIZATION_FILE, err);
    }
  }
  const model = emptyModel(organization ?? { name: '', slug: '', members: [] });
  // Where each resource lives: rule problems name a resource, the report names its file.
  const fileOf = new Map<string, string>();
  let done = 0;
  for (const [path, full] of files) {
    const place = classifyPath(path);
    if (place === null || place === 'organization') continue;
    if (++done % PROGRESS_EVERY === 0) progress(`checked ${done} of ${files.size - 1} files`);
    const text = await readFile(full, 'utf8');
    texts.set(path, text);
    try {
      collectionOf(model, place.kind).set(place.id, resourceOfFile(path, place.kind, place.id, text));
      fileOf.set(`${place.kind}/${place.id}`, path);
    } catch (err) {
      unwrap(path, err);
    }
  }
  if (organization !== undefined) {
    for (const problem of modelProblems(model)) {
      report(fileOf.get(`${problem.kind}/${problem.id}`) ?? resourcePath(problem.kind, problem.id), problem.message);
    }
  }
  problems.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line));
  return { files: files.size, problems };
}
