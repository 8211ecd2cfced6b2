import type { ChildProcess } from 'node:child_process';
import { ApiError, detailedMessage, ModelError } from '../errors.js';
import { checkDiagramSize, checkOrgSize, DEFAULT_BODY_LIMIT, DEFAULT_LIMITS, fileTooLarge, type Limits } from '../limits/limits.js';
import { FileError } from '../model/files.js';
import { LoadedTree, loadModel, type TreeChange } from '../model/load.js';
import { treeEntryProblem } from '../model/paths.js';
import { checkNewNames, checkNewNamesOfChange, type ModelChange } from '../model/rules.js';
import type { Diagram, Model } from '../model/types.js';
import { VersionNames, versionNameProblem } from '../history/versions.js';
import { CatFile, GitCommandError, gitText, ObjectTooLargeError, runGit, spawnGit, stopProcessGroup } from '../store/git-cli.js';
import { checkDraftPush } from './drafts.js';

/**
 * The check of a push, by git's own pre-receive hook (src/push/hook.ts) or before the smart
 * HTTP route lets receive-pack move a ref: `main` only moves forward, and every commit it
 * gains holds a valid model — checked by `loadModel`, the same code that loads every commit
 * the service serves, with the same rules that refuse API writes.
 *
 * A push is held to every rule and bound an API write is held to: git's own object checks
 * (`receive.fsckObjects`, set on every repository by push/hook.ts), the shape of the tree as
 * the store writes it, the model rules, the size limits, and versions named and placed as the
 * API makes them.
 *
 * It reads through git's command line, not the service's object store: during a push the
 * new objects sit in git's quarantine directory, which only git (told by the environment
 * receive-pack sets) can see.
 */

const ZERO = /^0{40}$/;
const MAIN = 'refs/heads/main';

export interface RefUpdate {
  old: string;
  new: string;
  ref: string;
}

/** A line of what git gives a pre-receive hook: `<old id> <new id> <ref>`. */
const REF_UPDATE = /^([0-9a-f]{40}|[0-9a-f]{64}) ([0-9a-f]{40}|[0-9a-f]{64}) (refs\/\S+)$/;

/**
 * The push options (`git push -o <option>`) git gives the pre-receive hook, in order: accepted
 * over HTTP (receive.advertisePushOptions), as git hosts accept them, and used for nothing.
 */
export function pushOptions(env: NodeJS.ProcessEnv): string[] {
  const count = Number.parseInt(env.GIT_PUSH_OPTION_COUNT ?? '', 10);
  if (!(count > 0)) return [];
  return Array.from({ length: Math.min(count, 100) }, (_, i) => env[`GIT_PUSH_OPTION_${i}`] ?? '').map((option) =>
    // One line of the pusher's terminal each, however long or strange the option given.
    option.replace(/[\x00-\x1f\x7f]/g, '?').slice(0, 200),
  );
}

/**
 * The ref updates of a push, as git gives them to its pre-receive hook. Anything else (the hook
 * run by hand, fed something else) is refused in words, not with a TypeError of a missing part.
 */
export function parseRefUpdates(stdin: string): RefUpdate[] {
  return stdin
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const parts = REF_UPDATE.exec(line.trim());
      if (parts === null) {
        throw new Error(`pre-receive: '${line.slice(0, 200)}' is not a ref update git would give ('<old id> <new id> refs/…')`);
      }
      return { old: parts[1]!, new: parts[2]!, ref: parts[3]! };
    });
}

/**
 * git's variables that point at a push's quarantined objects: set by receive-pack for its
 * hooks, and needed by every git command that must see the objects being pushed.
 */
export function quarantineEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  for (const name of ['GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_QUARANTINE_PATH']) {
    if (env[name] !== undefined) kept[name] = env[name];
  }
  return kept;
}

/** The environment variable that carries the server's limits to the hook (JSON of `Limits`). */
export const LIMITS_VARIABLE = 'C4STORE_LIMITS';

/** The limits a push is checked against: the server's, when it started the push's git, else the defaults. */
export function pushLimits(env: NodeJS.ProcessEnv = process.env): Limits {
  const given = env[LIMITS_VARIABLE];
  return given ? { ...DEFAULT_LIMITS, ...(JSON.parse(given) as Partial<Limits>) } : DEFAULT_LIMITS;
}

/** The problems of a push, one line each; none means it may go through. */
export async function checkPush(
  gitdir: string,
  updates: readonly RefUpdate[],
  env: NodeJS.ProcessEnv = {},
  limits: Limits = DEFAULT_LIMITS,
): Promise<string[]> {
  const problems: string[] = [];
  const mainUpdate = updates.find((update) => update.ref === MAIN);
  const tags = await checkVersionTags(
    gitdir,
    updates.filter((update) => update.ref.startsWith('refs/tags/')),
    mainUpdate,
    env,
  );
  for (const update of updates) {
    const branch = update.ref === MAIN || update.ref.startsWith('refs/heads/drafts/');
    const tipProblem = branch ? await branchTipProblem(gitdir, update, env) : null;
    if (tipProblem !== null) problems.push(tipProblem);
    else if (update.ref === MAIN) problems.push(...(await checkMain(gitdir, update, env, limits)));
    else if (update.ref.startsWith('refs/heads/drafts/')) {
      problems.push(...(await checkDraftPush(gitdir, update, env, (g, range, e) => checkCommits(g, range, e, limits))));
    } else if (update.ref.startsWith('refs/tags/')) {
      const problem = tags.get(update);
      if (problem !== undefined) problems.push(problem);
    } else {
      problems.push(`${update.ref}: only main, drafts/<name> and new version tags can be pushed; the model lives on main.`);
    }
  }
  return problems;
}

/**
 * A branch names a commit. git refuses anything else only when it moves the ref, after this
 * check; told of a blob or a tree, the check's own git commands failed, and the pusher read a
 * stack trace.
 */
async function branchTipProblem(gitdir: string, update: RefUpdate, env: NodeJS.ProcessEnv): Promise<string | null> {
  if (ZERO.test(update.new)) return null;
  const { stdout, code } = await runGit(gitdir, ['cat-file', '-t', update.new], { okCodes: [128], env });
  const type = stdout.toString('utf8').trim();
  if (code === 0 && type === 'commit') return null;
  const what = code === 0 ? `a ${type}` : 'no object of this repository';
  return `${update.ref}: a branch names a commit, and ${update.new.slice(0, 12)} is ${what}.`;
}

/**
 * The versions pushed as tags (`tags`), each: new, named as the API names versions, no folder of
 * another version's nor in one (beside the tags there were and the other new ones of this push),
 * on a commit of `main` (so one that was checked). The problem of each tag that has one.
 *
 * Checked together, in a number of git processes that does not grow with the number of tags (a
 * migration pushes thousands: three processes per tag, and each name compared with every other,
 * took 34 ms a tag, and past about 17,000 tags the push hit git's timeout): the tags there were
 * listed once, the names asked of one index (VersionNames), main resolved once, what every tag
 * names peeled to its commit by one `git cat-file --batch-check`, and the commits not on main
 * found by one `git rev-list`.
 */
async function checkVersionTags(
  gitdir: string,
  tags: readonly RefUpdate[],
  mainUpdate: RefUpdate | undefined,
  env: NodeJS.ProcessEnv,
): Promise<Map<RefUpdate, string>> {
  const problems = new Map<RefUpdate, string>();
  const tagName = (update: RefUpdate) => update.ref.slice('refs/tags/'.length);
  const newTags: RefUpdate[] = [];
  for (const update of tags) {
    if (ZERO.test(update.old)) newTags.push(update);
    else problems.set(update, `${update.ref}: versions are never moved or deleted; make a new one.`);
  }
  if (newTags.length === 0) return problems;
  const tagsBefore = (await gitText(gitdir, ['for-each-ref', '--format=%(refname:strip=2)', 'refs/tags'], { env }))
    .split('\n')
    .filter(Boolean);
  // A new version stands beside the tags there were and the other new ones of this push.
  const names = new VersionNames([...tagsBefore, ...newTags.map(tagName)]);
  const placed: RefUpdate[] = [];
  newTags.forEach((update, i) => {
    const name = tagName(update);
    const nameProblem = versionNameProblem(name) ?? names.clash(name, tagsBefore.length + i);
    if (nameProblem !== null) problems.set(update, `${update.ref}: ${nameProblem}`);
    else placed.push(update);
  });
  if (placed.length === 0) return problems;
  const main =
    mainUpdate && !ZERO.test(mainUpdate.new)
      ? mainUpdate.new
      : (await gitText(gitdir, ['rev-parse', '--verify', '-q', MAIN], { env })).trim();
  // What each names, peeled to a commit (a tag of a tag too), or `<input> missing` where it names none.
  const peeled = (
    await gitText(gitdir, ['cat-file', '--batch-check=%(objectname) %(objecttype)'], {
      env,
      input: placed.map((update) => `${update.new}^{commit}\n`).join(''),
    })
  ).split('\n');
  const commits = new Map<RefUpdate, string>();
  placed.forEach((update, i) => {
    const [commit, type] = (peeled[i] ?? '').split(' ');
    if (type === 'commit' && commit !== undefined) commits.set(update, commit);
    else problems.set(update, `${update.ref}: a version must name a commit of main.`);
  });
  if (commits.size === 0) return problems;
  // The commits reachable from the tags' and not from main: a tag's commit is on main unless it is one of them.
  const offMain = new Set(
    (
      await gitText(gitdir, ['rev-list', '--stdin'], {
        env,
        input: `${[...new Set(commits.values())].join('\n')}\n^${main}\n`,
      })
    )
      .split('\n')
      .filter(Boolean),
  );
  for (const [update, commit] of commits) {
    if (offMain.has(commit))
      problems.set(update, `${update.ref}: a version must name a commit of main; ${commit.slice(0, 12)} is not on it.`);
  }
  return problems;
}

async function checkMain(gitdir: string, update: RefUpdate, env: NodeJS.ProcessEnv, limits: Limits): Promise<string[]> {
  if (ZERO.test(update.new)) return ['main cannot be deleted.'];
  if (!ZERO.test(update.old)) {
    const { code } = await runGit(gitdir, ['merge-base', '--is-ancestor', update.old, update.new], { okCodes: [1], env });
    if (code !== 0) return ['main can only move forward: fetch, rebase your commits onto it, and push again (no force-push).'];
    if (!(await keepsFirstParentLine(gitdir, update, env))) {
      return [
        `main's history keeps its commits first: a merge would put ${update.old.slice(0, 12)} (main's tip) second, off the history, ` +
          'the change feed and revert. Rebase onto main (git pull --rebase), or merge your branch into main, and push again.',
      ];
    }
  }
  return ZERO.test(update.old)
    ? checkCommits(gitdir, [update.new], env, limits)
    : checkCommits(gitdir, [update.new, `^${update.old}`], env, limits, update.old);
}

/**
 * Whether main's tip before the push stays on its first-parent line, which is its history, the
 * change feed's event log and what revert restores: a merge made on a stale clone (`git pull`)
 * has the clone's commit first and main's tip second, and would drop every commit of main since
 * the clone's from that line. The oldest commit of `old..new` along first parents has `old` as its
 * first parent exactly when it stays.
 */
async function keepsFirstParentLine(gitdir: string, update: RefUpdate, env: NodeJS.ProcessEnv): Promise<boolean> {
  const listed = (
    await gitText(gitdir, ['rev-list', '--first-parent', '--parents', `${update.old}..${update.new}`, '--'], { env })
  ).trimEnd();
  return listed === '' || listed.slice(listed.lastIndexOf('\n') + 1).split(' ')[1] === update.old;
}

async function firstParentOf(gitdir: string, commit: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const { stdout, code } = await runGit(gitdir, ['rev-parse', '--verify', '-q', `${commit}^1`], { okCodes: [1], env });
  return code === 0 ? stdout.toString('utf8').trim() : undefined;
}

/**
 * Every commit of a `git rev-list` range, oldest first, loaded and checked as the service loads a
 * commit, within the limits counted from `before` (the branch's tip before the push; by default the first
 * commit's parent); the first problem.
 *
 * Each commit is checked against the one the walk checked just before it, as it always was: its
 * parent, or for a merge (or a second root) whichever commit `--topo-order` put before it, which
 * may be the tip of the branch it merges rather than its first parent. The first is loaded whole
 * (checkStep). Each later one is loaded from what it changed: one `git diff-tree --stdin` for the
 * whole range says, commit by commit, which tree entries changed against the one before; the
 * shape rule (treeEntryProblem) is asked of those, since the commit before had no entry breaking
 * it, and a LoadedTree (model/load.ts) takes in the changed files and runs the model rules on what
 * they can break. So a commit costs what it changed, not the model's size (bench/push-check.ts).
 * A commit that breaks a rule is then checked as the first one was, whole, against the commit
 * before it loaded anew: the message is the one checking every commit whole gives, the same
 * problem named first.
 */
export async function checkCommits(
  gitdir: string,
  range: readonly string[],
  env: NodeJS.ProcessEnv,
  limits: Limits = DEFAULT_LIMITS,
  before?: string,
): Promise<string[]> {
  const commits = (await gitText(gitdir, ['rev-list', '--reverse', '--topo-order', ...range, '--'], { env })).split('\n').filter(Boolean);
  if (commits.length === 0) return [];
  const catFile = new CatFile(gitdir, env);
  let diffs: TreeDiffs | undefined;
  try {
    // What the branch held before (by default the first new commit's parent: for a new draft, the
    // main it branched from): the bounds and the names count from it. A broken base (committed past
    // the hook) counts as nothing, so that a push can still repair it.
    const base = before ?? (await firstParentOf(gitdir, commits[0]!, env));
    const previous = base === undefined ? undefined : await loadCommit(gitdir, base, catFile, env).catch(() => undefined);
    const first = await checkStep(gitdir, commits[0]!, previous, catFile, env, limits);
    if (typeof first === 'string') return [first];
    if (commits.length === 1) return [];
    let tree = new LoadedTree(first.files, first.model);
    diffs = new TreeDiffs(gitdir, commits, env);
    // The files a commit brings are held to what a push may bring (one too large is named by checkStep).
    const incoming = sourceOf(catFile, undefined, new Map());
    for (let i = 1; i < commits.length; i++) {
      const commit = commits[i]!;
      const { changes, entries } = await diffs.next(commit);
      let broken = entries.some(({ path, mode }) => treeEntryProblem(path, mode) !== null);
      if (!broken) {
        try {
          const componentsBefore = tree.current.components.size;
          const change = await tree.apply(changes, incoming);
          checkChangeBounds(tree.current, componentsBefore, change, limits);
          checkNewNamesOfChange(tree.current, change, tree.refs);
        } catch (err) {
          if (!isProblem(err)) throw err;
          broken = true;
        }
      }
      if (!broken) continue;
      // Which rule, and where, as checking this commit whole against the one before it says.
      const loaded = await checkStep(gitdir, commit, await loadCommit(gitdir, commits[i - 1]!, catFile, env), catFile, env, limits);
      if (typeof loaded === 'string') return [loaded];
      tree = new LoadedTree(loaded.files, loaded.model);
    }
    return [];
  } finally {
    diffs?.close();
    catFile.close();
  }
}

/** A refusal of the commit's content (a file, a rule, a size), as opposed to a failure of the check. */
function isProblem(err: unknown): err is Error {
  return err instanceof FileError || err instanceof ModelError || (err instanceof ApiError && err.status === 413);
}

/**
 * One commit loaded whole and checked against the commit checked before it (`previous`, loaded):
 * its problem, as the push's refusal says it, or the commit loaded.
 */
async function checkStep(
  gitdir: string,
  commit: string,
  previous: { files: Map<string, string>; model: Model } | undefined,
  catFile: CatFile,
  env: NodeJS.ProcessEnv,
  limits: Limits,
): Promise<string | { files: Map<string, string>; model: Model }> {
  const { files, shapeProblem } = await treeEntries(gitdir, commit, env);
  if (shapeProblem !== null) return `commit ${commit.slice(0, 12)}: ${shapeProblem}`;
  try {
    const model = await loadModel(files, sourceOf(catFile, previous, files));
    checkBounds(model, previous?.model, limits);
    // As the write step's finish(): an id or ref this commit brings in must not name a second resource.
    checkNewNames(model, previous?.model);
    return { files, model };
  } catch (err) {
    if (isProblem(err)) return `commit ${commit.slice(0, 12)}: ${detailedMessage(err)}`;
    throw err;
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
        throw new FileError(path, fileTooLarge(err.size));
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
 * checkBounds on what a change brought: the number of components, and each diagram it brought or
 * replaced (checkBounds: a diagram whose file did not change is the one checked before).
 */
function checkChangeBounds(model: Model, componentsBefore: number, change: ModelChange, limits: Limits): void {
  checkOrgSize(componentsBefore, model.components.size, limits);
  for (const { kind, now } of change.changed) {
    if (kind !== 'diagram') continue;
    const diagram = now as Diagram;
    checkDiagramSize(
      diagram.name,
      { instances: diagram.componentInstances.length, relations: diagram.relations.length, textareas: diagram.textareas.length },
      limits,
    );
  }
}

/** A tree entry a commit has that the commit before it had not (another object, another mode, or none). */
interface ChangedEntry {
  path: string;
  mode: string;
}

const NO_ENTRY = '000000';

/** Whether a tree entry of this mode is a blob: a file, executable or not, or a symlink (not a folder, not a submodule). */
function isBlobMode(mode: string): boolean {
  return mode !== NO_ENTRY && mode !== '040000' && mode !== '160000';
}

/**
 * What each commit of a range changed against the commit before it in the range, by one
 * `git diff-tree --stdin -r -t` for the whole range (a process per commit cost more than the
 * check): read commit by commit as the check goes, so that the output of a long history is never
 * held whole, and stopped when the check stops.
 */
class TreeDiffs {
  private readonly child: ChildProcess;
  private readonly records: AsyncIterator<string>;
  private readonly stderr: Buffer[] = [];
  private readonly exited: Promise<number | null>;
  /** The header of the next commit's diff, once read. */
  private pending: string | undefined;

  constructor(gitdir: string, commits: readonly string[], env: NodeJS.ProcessEnv) {
    // `--always`: a commit that changed nothing still has its header, so each commit's diff is found by it.
    this.child = spawnGit(gitdir, ['diff-tree', '--stdin', '-r', '-t', '--raw', '-z', '--no-renames', '--no-abbrev', '--always'], env);
    this.exited = new Promise((resolve) => {
      this.child.on('close', (code) => resolve(code));
      this.child.on('error', () => resolve(null));
    });
    this.child.stderr!.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    this.child.stdin!.on('error', () => {});
    // Each line names a commit and, as its only parent, the commit checked before it.
    const lines: string[] = [];
    for (let i = 1; i < commits.length; i++) lines.push(`${commits[i]} ${commits[i - 1]}\n`);
    this.child.stdin!.end(lines.join(''));
    this.records = nulSeparated(this.child.stdout!)[Symbol.asyncIterator]();
  }

  /** The blobs `commit` changed (path → blob now, or null) and the entries it has anew. */
  async next(commit: string): Promise<{ changes: TreeChange[]; entries: ChangedEntry[] }> {
    const header = this.pending ?? (await this.token());
    this.pending = undefined;
    if (header !== commit) throw new Error(`git diff-tree answered for ${String(header)} where ${commit} was asked`);
    const blobs = new Map<string, string | null>();
    const entries: ChangedEntry[] = [];
    for (;;) {
      const token = await this.token(true);
      if (token === undefined) break;
      if (!token.startsWith(':')) {
        this.pending = token;
        break;
      }
      // `:<old mode> <new mode> <old id> <new id> <status>`, then the path.
      const [oldMode, newMode, , newOid] = token.slice(1).split(' ');
      const path = (await this.token())!;
      if (newMode !== NO_ENTRY) entries.push({ path, mode: newMode! });
      // A file that became a folder is gone as a file; one that came in a folder's place is there.
      if (isBlobMode(newMode!)) blobs.set(path, newOid!);
      else if (isBlobMode(oldMode!) && !blobs.has(path)) blobs.set(path, null);
    }
    return { changes: [...blobs].map(([path, oid]) => ({ path, oid })), entries };
  }

  close(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) stopProcessGroup(this.child);
  }

  private async token(endAllowed = false): Promise<string | undefined> {
    const { value, done } = await this.records.next();
    if (!done) return value;
    const code = await this.exited;
    if (code !== 0) throw new GitCommandError(['diff-tree', '--stdin'], code, Buffer.concat(this.stderr).toString('utf8'));
    if (!endAllowed) throw new Error('git diff-tree ended before every commit was answered');
    return undefined;
  }
}

/** The NUL-terminated strings of a stream (`-z` output), decoded as UTF-8 whole. */
async function* nulSeparated(stream: AsyncIterable<Buffer>): AsyncGenerator<string> {
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of stream) {
    const data: Buffer = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
    let start = 0;
    for (let end = data.indexOf(0, start); end >= 0; end = data.indexOf(0, start)) {
      yield data.toString('utf8', start, end);
      start = end + 1;
    }
    rest = data.subarray(start);
  }
}

/**
 * path → blob id of every file in a commit's tree, in git's order, and the first entry that is
 * not shaped as the store writes it (paths.ts, treeEntryProblem).
 */
export async function treeEntries(
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
export async function treeFiles(gitdir: string, commit: string, env: NodeJS.ProcessEnv = {}): Promise<Map<string, string>> {
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
