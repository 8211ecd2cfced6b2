/**
 * THE REFERENCE: push/check.ts's `checkCommits` as it was before it became incremental (commit
 * 46424aa), kept verbatim (but for the one line that words a refusal), only for the tests and the benchmark to compare the new one against.
 * For every commit it lists the whole tree (`git ls-tree -r -t`) and loads the whole model
 * (reusing unchanged files by blob id): the same verdicts and messages, at a cost in proportion
 * to the model's size. Not used by the service.
 */
import { ApiError, detailedMessage, ModelError } from '../../src/errors.js';
import { checkDiagramSize, checkOrgSize, DEFAULT_BODY_LIMIT, DEFAULT_LIMITS, type Limits } from '../../src/limits/limits.js';
import { FileError } from '../../src/model/files.js';
import { loadModel } from '../../src/model/load.js';
import { treeEntryProblem } from '../../src/model/paths.js';
import { checkNewNames } from '../../src/model/rules.js';
import type { Model } from '../../src/model/types.js';
import { CatFile, gitText, ObjectTooLargeError, runGit } from '../../src/store/git-cli.js';

async function firstParentOf(gitdir: string, commit: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const { stdout, code } = await runGit(gitdir, ['rev-parse', '--verify', '-q', `${commit}^1`], { okCodes: [1], env });
  return code === 0 ? stdout.toString('utf8').trim() : undefined;
}

/**
 * Every commit of a `git rev-list` range, oldest first, loaded and checked as the service loads a
 * commit, within the limits counted from `before` (the branch's tip before the push; by default the first
 * commit's parent); the first problem.
 */
export async function referenceCheckCommits(
  gitdir: string,
  range: readonly string[],
  env: NodeJS.ProcessEnv,
  limits: Limits = DEFAULT_LIMITS,
  before?: string,
): Promise<string[]> {
  const commits = (await gitText(gitdir, ['rev-list', '--reverse', '--topo-order', ...range, '--'], { env })).split('\n').filter(Boolean);
  const catFile = new CatFile(gitdir, env);
  try {
    // What the branch held before (by default the first new commit's parent: for a new draft, the
    // main it branched from): the bounds and the names count from it. A broken base (committed past
    // the hook) counts as nothing, so that a push can still repair it.
    const base = before ?? (commits.length === 0 ? undefined : await firstParentOf(gitdir, commits[0]!, env));
    let previous = base === undefined ? undefined : await loadCommit(gitdir, base, catFile, env).catch(() => undefined);
    for (const commit of commits) {
      const { files, shapeProblem } = await treeEntries(gitdir, commit, env);
      if (shapeProblem !== null) return [`commit ${commit.slice(0, 12)}: ${shapeProblem}`];
      try {
        const model = await loadModel(files, sourceOf(catFile, previous, files));
        checkBounds(model, previous?.model, limits);
        // As the write step's finish(): an id or ref this commit brings in must not name a second resource.
        checkNewNames(model, previous?.model);
        previous = { files, model };
      } catch (err) {
        if (err instanceof FileError || err instanceof ModelError || (err instanceof ApiError && err.status === 413)) {
          // A refusal's message then held what it concerns: its detailed form since the API's texts became exact.
          return [`commit ${commit.slice(0, 12)}: ${detailedMessage(err)}`];
        }
        throw err;
      }
    }
    return [];
  } finally {
    catFile.close();
  }
}

async function loadCommit(
  gitdir: string,
  commit: string,
  catFile: CatFile,
  env: NodeJS.ProcessEnv,
): Promise<{ files: Map<string, string>; model: Model }> {
  const files = await treeFiles(gitdir, commit, env);
  return { files, model: await loadModel(files, sourceOf(catFile, undefined)) };
}

/**
 * The files of a commit, read for loadModel. With `pushed` (the pushed commit's files), a file
 * larger than a request body may be is refused: no API write could make it, and once in, the
 * resource could not be written back through the API (413).
 */
function sourceOf(
  catFile: CatFile,
  previous: { files: Map<string, string>; model: Model } | undefined,
  pushed?: ReadonlyMap<string, string>,
) {
  return {
    // The pushed commits' files are held to what a push may bring; the commit before them is read as served.
    incoming: pushed !== undefined,
    read: async (oid: string) => {
      // A larger file is refused by its size alone: never held in memory (a pack carries a blob of
      // gigabytes of one repeated byte in a few kilobytes).
      const content = await catFile.read(oid, pushed === undefined ? undefined : DEFAULT_BODY_LIMIT).catch((err: unknown) => {
        if (!(err instanceof ObjectTooLargeError) || pushed === undefined) throw err;
        const path = [...pushed].find(([, each]) => each === oid)?.[0] ?? oid;
        const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
        throw new FileError(path, `${mb(err.size)}, larger than one write may carry (${mb(DEFAULT_BODY_LIMIT)}).`);
      });
      if (content === null) throw new Error(`object ${oid} is missing`);
      return content.toString('utf8');
    },
    reuse: previous ? reuseFrom(previous) : undefined,
  };
}

/**
 * The size limits an API write is held to, on what a commit changed: each diagram whose file
 * changed, and the number of components (a repository already above a lowered limit can still
 * be pushed to, as it can be written to).
 */
function checkBounds(model: Model, previous: Model | undefined, limits: Limits): void {
  checkOrgSize(previous?.components.size ?? 0, model.components.size, limits);
  for (const diagram of model.diagrams.values()) {
    // A diagram whose file did not change is the very object loaded before (reuse): checked then.
    if (previous?.diagrams.get(diagram.id) === diagram) continue;
    checkDiagramSize(
      diagram.name,
      { instances: diagram.componentInstances.length, relations: diagram.relations.length, textareas: diagram.textareas.length },
      limits,
    );
  }
}

function reuseFrom(previous: { files: Map<string, string>; model: Model }) {
  return (path: string, oid: string) => (previous.files.get(path) === oid ? previous.model : undefined);
}

/**
 * path → blob id of every file in a commit's tree, in git's order, and the first entry that is
 * not shaped as the store writes it (paths.ts, treeEntryProblem).
 */
async function treeEntries(
  gitdir: string,
  commit: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ files: Map<string, string>; shapeProblem: string | null }> {
  const { stdout } = await runGit(gitdir, ['ls-tree', '-r', '-t', '-z', '--full-tree', commit], { env });
  const files = new Map<string, string>();
  let shapeProblem: string | null = null;
  for (const entry of stdout.toString('utf8').split('\0')) {
    if (entry === '') continue;
    const tab = entry.indexOf('\t');
    const [mode, type, oid] = entry.slice(0, tab).split(' ');
    const path = entry.slice(tab + 1);
    shapeProblem ??= treeEntryProblem(path, mode!);
    if (type === 'blob') files.set(path, oid!);
  }
  return { files, shapeProblem };
}

/** path → blob id of every file in a commit's tree, in git's order. */
async function treeFiles(gitdir: string, commit: string, env: NodeJS.ProcessEnv = {}): Promise<Map<string, string>> {
  const { stdout } = await runGit(gitdir, ['ls-tree', '-r', '-z', '--full-tree', commit], { env });
  const files = new Map<string, string>();
  for (const entry of stdout.toString('utf8').split('\0')) {
    if (entry === '') continue;
    const tab = entry.indexOf('\t');
    const [, type, oid] = entry.slice(0, tab).split(' ');
    if (type === 'blob') files.set(entry.slice(tab + 1), oid);
  }
  return files;
}
