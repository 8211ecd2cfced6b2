import { ApiError, ModelError } from '../errors.js';
import { DEFAULT_LIMITS, type Limits } from '../limits/limits.js';
import { Draft, type LayoutRunner, type WriteOptions } from '../model/draft.js';
import { SCHEMA_FILES, schemasCurrent } from '../editor/schemas.js';
import { collectionOf, FileError } from '../model/files.js';
import { loadModel, readingOrder } from '../model/load.js';
import { classifyPath, DIRECTORIES, layoutOf, SHARDED_KINDS, type TreeLayout } from '../model/paths.js';
import type { Model } from '../model/types.js';
import { ObjectNotFoundError, WrongObjectTypeError } from '../store/object-storage.js';
import { MAIN_REF, RefNotAnIdError } from '../store/refs.js';
import { StaleHeadError, type Author, type Repo, type TreeChange } from '../store/repo.js';
import { commitMessage } from './commit-message.js';
import { estimateModelBytes, ResponseCache, SnapshotCache } from './snapshot-cache.js';
import { resolveCommitName } from './commit-names.js';
import { layoutUpgradeMessage, shardingMoves } from './layout-upgrade.js';
import { type ModelCache, readModelCache, writeModelCache } from './model-cache.js';

/** The model at one commit, plus responses already serialized from it. */
export interface Snapshot {
  readonly commit: string;
  readonly model: Model;
  /** Serialized GET bodies, built once per commit (a ResponseCache counts their bytes). */
  readonly responses: Map<string, Buffer>;
  /** 'flat': a commit from before sharding (paths.ts), moved on by the next write. Absent: sharded. */
  readonly layout?: TreeLayout;
  /** False when the tree lacks the current `.c4store/schemas/` (an older repository): the next write adds them. */
  readonly schemasCurrent?: boolean;
}

/** What an organization's writes are run with, beyond its repository. */
export interface OrgSettings {
  limits?: Limits;
  runLayout?: LayoutRunner;
  writeTimeout?: number;
  /** Told of every commit the service makes (background packing, mirroring), and on which branch. */
  afterCommit?: (commit: string, ref: string) => void;
  /** Told how long each write waited for the lock and how long its commit took (metrics). */
  observeWrite?: (timing: WriteTiming) => void;
  testPauses?: TestPauses;
}

/**
 * Tests only (never set by `c4store serve`): points inside a request where it waits for the test,
 * so that what can happen there only by chance — a push landing mid-merge — happens every time.
 */
export interface TestPauses {
  /** A merge into main has committed and holds the lock; the draft is not yet marked merged. */
  afterMergeCommit?: (draft: string) => Promise<void>;
  /** An agent's tool (src/mcp/) is called, its arguments checked; it has not begun to run. */
  toolCalled?: (tool: string) => Promise<void>;
}

export interface WriteTiming {
  lockWaitMs: number;
  /** Objects, tree and the compare-and-swap of `main`: the store's part of a write. */
  commitMs: number;
}

/** A write's conditions on the commit of the branch it writes (RFC 9110 §13.1), as its request gave them. */
export interface Preconditions {
  /** `If-Match`: the commits the client last read (`*`: any). */
  ifMatch?: readonly string[];
  /** `If-None-Match`: commits the branch must not be at (`*`: none, so never true of a write). */
  ifNoneMatch?: readonly string[];
}

/**
 * A write goes ahead when one of the `If-Match` commits (or `*`) is where the branch is now and
 * none of the `If-None-Match` ones is; otherwise 412, `If-Match` first (RFC 9110 §13.2.2).
 */
export function checkPreconditions(conditions: Preconditions, commit: string): void {
  const { ifMatch, ifNoneMatch } = conditions;
  if (ifMatch !== undefined && !ifMatch.includes('*') && !ifMatch.includes(commit)) {
    throw new ApiError(412, `The model has changed since ${ifMatch.join(', ')}.`);
  }
  if (ifNoneMatch?.includes('*')) {
    throw new ApiError(412, 'If-None-Match: * is never true of a write: the branch written always has a commit.');
  }
  if (ifNoneMatch?.includes(commit)) throw new ApiError(412, `The model is still at ${commit}.`);
}

/** The pure step of a write, on the draft of the next model; `at` is the commit it starts from. */
export type WriteStep<R> = (draft: Draft, at: string) => Promise<R> | R;

/** Its `If-Match` and `If-None-Match` are of the branch written. */
export interface WriteRequest extends Preconditions {
  /** The branch written: `main` (default) or a draft's `refs/heads/drafts/<name>`. Every rule and step is the same on each. */
  ref?: string;
  /**
   * A merge: the tip of the branch merged in, the commit's second parent. The commit is made
   * even when the tree stays as it was, so that the branch records what it has taken in. Asked
   * once the step has run, so that a merge can work out under the lock what it takes in
   * (undefined: nothing, no merge commit).
   */
  mergedParent?: () => string | undefined;
  /**
   * Files outside the model written beside the step's changes, asked once the step has run: a
   * merge brings what the branch merged in changed of them (a README pushed into a draft).
   */
  otherFiles?: () => readonly TreeChange[];
  /**
   * Run under the organization's lock once the write is done (with its commit, or the
   * unchanged tip when it made none), so that what goes with the commit (a merged draft's
   * ref) moves before any other write. A failure here does not undo the commit.
   */
  whileLocked?: (commit: string) => Promise<void>;
  author: Author;
  /** First words of the commit message: `POST /api/external/component`. */
  title: string;
  /**
   * A title as people say it, from the model before and after the step (`Moved 'Web Shop' on
   * 'Shop - Containers'`): replaces `title` and its counts (service/commit-message.ts).
   */
  spoken?: (draft: Draft) => string;
  options: WriteOptions;
  /**
   * The step may write files exactly as they are stored (`c4store upgrade` rewrites every
   * file): such files are left out of the commit and of its message, which lists only what
   * changed in git.
   */
  mayRewriteUnchanged?: boolean;
  /** Trailers the commit message ends with besides `Api-Context:`, e.g. `Agent: <MCP client>`. */
  trailers?: readonly string[];
}

/**
 * Snapshots of the latest tips (of main and of drafts) kept beside the byte-bounded cache: a
 * draft's next write, and a merge's base (main where a draft began), are found here without a
 * load. They share almost all of their model with main's, so a few cost little memory, and
 * keeping one costs nothing (the cache's byte estimate walks the whole model).
 */
const RECENT_TIPS = 8;
/** A model of fewer files keeps no model cache; a cold load that parsed this many files the cache lacked rewrites it. */
const MODEL_CACHE_REFRESH_AFTER = 256;
/** How long after a cold load its model cache is written (see refreshModelCache). */
const MODEL_CACHE_WRITE_DELAY_MS = 1000;
/** Model cache writes waiting, by git directory: only the latest of each is written. */
const modelCacheJobs = new Map<string, () => Promise<void>>();
/** Git directories whose model cache is about to be written, or being written. */
const modelCacheWriters = new Set<string>();

/**
 * Writes a model cache after a pause: serializing takes the event loop ~0.1 s at 10,000
 * components, which the first answers, waiting for the very load that asks, need more. One
 * write at a time per repository, the latest asked for (two cold loads in a row, of main and a
 * draft say, write the second's). A cache that cannot be written (read-only data directory,
 * full disk) only costs time.
 */
function scheduleModelCacheWrite(gitdir: string, write: () => Promise<void>): void {
  modelCacheJobs.set(gitdir, write);
  if (modelCacheWriters.has(gitdir)) return;
  modelCacheWriters.add(gitdir);
  setTimeout(async () => {
    try {
      for (let next = modelCacheJobs.get(gitdir); next !== undefined; next = modelCacheJobs.get(gitdir)) {
        modelCacheJobs.delete(gitdir);
        await next().catch(() => {});
      }
    } finally {
      modelCacheWriters.delete(gitdir);
    }
  }, MODEL_CACHE_WRITE_DELAY_MS).unref();
}

/** Verdicts on invalid commits kept per organization (an ApiError each: small). */
const KEPT_VERDICTS = 8;
let opened = 0;
/** Writes one organization lets wait for its lock; more are refused, not queued without bound. */
export const DEFAULT_MAX_WAITING_WRITES = 256;
const MAX_ATTEMPTS = 3;
/** How far back a server started on a broken `main` looks for a valid commit to serve reads from. */
const MAX_FALLBACK_STEPS = 50;
/** A large write's step still running after this long is cancelled (see model/write/turns.ts). */
export const DEFAULT_WRITE_TIMEOUT = 60_000;

/**
 * One organization's model: reads come from an in-memory snapshot keyed by the commit of
 * `main`; a write runs the pure model step on the snapshot under the organization's write
 * lock and commits the files it changed.
 */
export class OrgModel {
  private current: Snapshot | undefined;
  private loading: { commit: string; snapshot: Promise<Snapshot> } | undefined;
  /** Where this model's `?at=` snapshots are kept: the server's one budget of bytes (snapshot-cache.ts). */
  private readonly older: SnapshotCache<Snapshot>;
  /** Names this model's snapshots in `older`: a model opened anew (new identity) never sees the old ones. */
  readonly owner: string;
  /**
   * Commits found invalid, with their 503. A commit never changes, so neither does the
   * verdict: while `main` stays on a broken commit (pushed behind the service's back), every
   * request is refused at once instead of re-reading and re-checking the whole tree.
   */
  private readonly invalid = new Map<string, ApiError>();
  private waitingWrites = 0;
  private readonly recentTips = new Map<string, Snapshot>();
  /** The newest snapshot of `main` that held a valid model: what reads serve while `main` is broken. */
  private lastValid: Snapshot | undefined;

  constructor(
    readonly slug: string,
    readonly repo: Repo,
    private readonly maxWaitingWrites = DEFAULT_MAX_WAITING_WRITES,
    /** The identity of the repository (its `c4store.orgId`) this model was opened on. */
    readonly identity?: string,
    older?: SnapshotCache<Snapshot>,
    private readonly settings: OrgSettings = {},
  ) {
    this.older = older ?? new SnapshotCache<Snapshot>();
    this.owner = `${slug}/${identity ?? ''}/${++opened}`;
  }

  /** See TestPauses; none outside tests. */
  get testPauses(): TestPauses | undefined {
    return this.settings.testPauses;
  }

  /** The bounds its writes are held to (src/limits/limits.ts). */
  get limits(): Limits {
    return this.settings.limits ?? DEFAULT_LIMITS;
  }

  /** The model at the tip of `main`; a tip moved by another process is loaded here. */
  async head(): Promise<Snapshot> {
    const commit = await this.repo.readHead().catch((err: unknown) => {
      // Written by hand, or cut by a disk fault: no commit to serve or write upon, said so (not a 500).
      if (err instanceof RefNotAnIdError) {
        throw new ApiError(503, `The model in git is invalid: ${MAIN_REF} does not hold a commit id.`);
      }
      throw err;
    });
    if (commit === null) throw new Error(`Organization ${this.slug} has no main branch`);
    if (this.current?.commit === commit) return this.current;
    // Requests arriving while a commit loads share that one load.
    if (this.loading?.commit !== commit) {
      const loading = { commit, snapshot: this.load(commit, this.current) };
      this.loading = loading;
      loading.snapshot.then(
        (snapshot) => {
          this.current = snapshot;
          this.lastValid = snapshot;
          if (this.loading === loading) this.loading = undefined;
        },
        () => {
          if (this.loading === loading) this.loading = undefined;
        },
      );
    }
    return this.loading.snapshot;
  }

  /**
   * What a read serves: the tip of `main`, or, while `main` holds an invalid model (committed
   * behind the service's back, past the pre-receive hook), the last valid commit before it,
   * with the reason to tell the client. Writes still refuse a broken `main` (head()).
   */
  async readable(): Promise<{ snapshot: Snapshot; warning?: string }> {
    try {
      return { snapshot: await this.head() };
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 503 || !this.isInvalidHead(err)) throw err;
      const fallback = this.lastValid ?? (await this.findLastValid());
      if (!fallback) throw err;
      // A warning is all the answer has to say it with: the detailed text (there is no refusal to carry a context header).
      return { snapshot: fallback, warning: `${err.detailed} Serving commit ${fallback.commit}, the last valid one.` };
    }
  }

  private isInvalidHead(err: ApiError): boolean {
    for (const refusal of this.invalid.values()) if (refusal === err) return true;
    return false;
  }

  /** After a start on a broken `main`: its nearest first-parent ancestor that loads, within a bound. */
  private async findLastValid(): Promise<Snapshot | undefined> {
    const head = await this.repo.readHead();
    if (head === null) return undefined;
    // The tip itself is known to be broken; its first parents, newest first (none to be found
    // when the tip's own commit is missing: then there is no fallback, and reads say why).
    const ancestors = (await this.repo.log(head, MAX_FALLBACK_STEPS + 1).catch(() => [])).slice(1);
    for (const { oid: parent } of ancestors) {
      try {
        this.lastValid = await this.load(parent, undefined);
        return this.lastValid;
      } catch (err) {
        if (!(err instanceof ApiError) || err.status !== 503) throw err;
      }
    }
    return undefined;
  }

  /** The model as of an earlier commit, for `?at=`: a revision as commit-names.ts reads it. */
  async at(name: string): Promise<Snapshot> {
    if (this.current?.commit === name) return this.current;
    const kept = this.older.get(this.owner, name);
    if (kept) return kept;
    return this.snapshotOf(await resolveCommitName(this.repo, name), false);
  }

  /** The model at a commit known to exist (a full id), from the recent tips where it is one of them (a draft's base). */
  revision(commit: string): Promise<Snapshot> {
    return this.snapshotOf(commit, true);
  }

  /**
   * The model at the tip of a branch: `main`, or a draft's branch. A draft's snapshots are
   * kept like `?at=` ones (by commit, in the byte-bounded cache), each loaded from `main`'s
   * as far as their files are the same, so a draft costs what it changes.
   */
  async tip(ref: string = MAIN_REF): Promise<Snapshot> {
    if (ref === MAIN_REF) return this.head();
    const commit = await this.repo.readBranch(ref);
    // Moved away (a draft closed or merged) between finding it and reading it.
    if (commit === null) throw new ApiError(409, `Branch '${ref.replace(/^refs\/heads\//, '')}' no longer exists.`);
    return this.snapshotOf(commit, true);
  }

  /** The snapshot of a known commit id: main's, a recent tip (`recent`), a kept one, or loaded and kept. */
  private async snapshotOf(commit: string, recent: boolean): Promise<Snapshot> {
    if (this.current?.commit === commit) return this.current;
    const tip = recent ? this.recentTips.get(commit) : undefined;
    if (tip) return tip;
    const known = this.older.get(this.owner, commit);
    if (known) return known;
    const snapshot = await this.load(commit, this.current);
    this.keep(snapshot);
    return snapshot;
  }

  private rememberTip(snapshot: Snapshot): void {
    this.recentTips.delete(snapshot.commit);
    this.recentTips.set(snapshot.commit, snapshot);
    if (this.recentTips.size > RECENT_TIPS) this.recentTips.delete(this.recentTips.keys().next().value!);
  }

  private keep(snapshot: Snapshot): void {
    const responses = snapshot.responses as ResponseCache;
    this.older.put(this.owner, snapshot.commit, { snapshot, modelBytes: estimateModelBytes(snapshot.model), responses });
  }

  /** `step` is given the draft of the next model and the commit it starts from (the branch's tip, under the lock). */
  async write<R>(request: WriteRequest, step: WriteStep<R>): Promise<{ snapshot: Snapshot; result: R }> {
    if (this.waitingWrites >= this.maxWaitingWrites) {
      throw new ApiError(503, 'Too many writes are waiting for this organization; retry shortly.', { 'Retry-After': '1' });
    }
    this.waitingWrites++;
    try {
      // The step is pure, so a write that lost the ref compare-and-swap to another process
      // (possible when two take over one stale lock at once) is simply run again on the new tip.
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.writeUnderLock(request, step);
        } catch (err) {
          if (!(err instanceof StaleHeadError)) throw err;
          if (attempt === MAX_ATTEMPTS) {
            throw new ApiError(503, 'The model kept changing during this write; retry shortly.', { 'Retry-After': '1' });
          }
        }
      }
    } finally {
      this.waitingWrites--;
    }
  }

  /** True once a snapshot of `main` is in memory. */
  get loaded(): boolean {
    return this.current !== undefined;
  }

  private writeUnderLock<R>(request: WriteRequest, step: WriteStep<R>): Promise<{ snapshot: Snapshot; result: R }> {
    const ref = request.ref ?? MAIN_REF;
    const asked = performance.now();
    return this.repo.withWriteLock(async () => {
      const lockWaitMs = performance.now() - asked;
      const base = await this.tip(ref);
      checkPreconditions(request, base.commit);
      const draft = new Draft(base.model, {
        ...request.options,
        limits: request.options.limits ?? this.limits,
        runLayout: request.options.runLayout ?? this.settings.runLayout,
        deadline: request.options.deadline ?? this.deadline(),
      });
      const result = await step(draft, base.commit);
      draft.finish();
      const mergedParent = request.mergedParent?.();
      const otherFiles = request.otherFiles?.() ?? [];
      if (draft.changes.length === 0 && mergedParent === undefined && otherFiles.length === 0) {
        await request.whileLocked?.(base.commit);
        return { snapshot: base, result };
      }
      // A write never mixes layouts: a flat tree (pushed, or from before sharding) is moved
      // first, in a commit of its own; a refused or empty write moves nothing.
      const parent = base.layout === 'flat' ? (await this.commitShardingMoves(base.commit, request.author, ref)).commit : base.commit;
      // An older repository gets the editor schemas with its next write, beside what the write changes.
      const schemas = base.schemasCurrent === false ? SCHEMA_FILES : [];
      const changes = request.mayRewriteUnchanged ? await this.repo.withoutUnchanged(parent, draft.changes) : draft.changes;
      const files = [
        ...changes.map(({ action, path, content }) => ({ path, content: action === 'delete' ? null : content })),
        ...schemas,
        ...otherFiles,
      ];
      const message = commitMessage(request.title, changes, request.options.apiContext, {
        spoken: request.spoken?.(draft),
        trailers: request.trailers,
      });
      const committing = performance.now();
      const commit = await this.repo.commit({
        parent,
        ref,
        mergedParent,
        changes: files,
        author: request.author,
        message,
      });
      const commitMs = performance.now() - committing;
      const snapshot: Snapshot = { commit, model: draft.model, responses: new ResponseCache() };
      if (ref === MAIN_REF) {
        // The tip it replaces may be a draft's base: its model kept a while (not its answers).
        if (base === this.current) this.rememberTip({ ...base, responses: new ResponseCache() });
        this.current = snapshot;
        this.lastValid = snapshot;
      } else {
        this.rememberTip(snapshot);
      }
      this.settings.afterCommit?.(commit, ref);
      this.settings.observeWrite?.({ lockWaitMs, commitMs });
      await request.whileLocked?.(commit);
      return { snapshot, result };
    });
  }

  /** When a write starting now is cancelled (its time waiting for the lock does not count). */
  private deadline(): WriteOptions['deadline'] {
    const ms = this.settings.writeTimeout ?? DEFAULT_WRITE_TIMEOUT;
    return { at: Date.now() + ms, seconds: ms / 1000 };
  }

  /**
   * Moves a repository in the flat layout to the sharded one in one commit of its own (see
   * layout-upgrade.ts); `moved` is 0, and nothing is written, when `main` is not flat. Works on
   * the tree alone: the model is neither loaded nor checked (its files move unchanged).
   */
  async upgradeLayout(author: Author): Promise<{ commit: string; moved: number }> {
    // Start-up asks this of every organization: a look at two directories, no lock, when nothing is flat.
    const tip = await this.repo.readHead();
    if (tip !== null && !(await mayBeFlat(this.repo, tip))) return { commit: tip, moved: 0 };
    return this.repo.withWriteLock(async () => {
      const head = await this.repo.readHead();
      if (head === null) throw new Error(`Organization ${this.slug} has no main branch`);
      return this.commitShardingMoves(head, author, MAIN_REF);
    });
  }

  /** Under the write lock: the commit moving `parent`'s tree to the sharded layout, if it is flat. */
  private async commitShardingMoves(parent: string, author: Author, ref: string): Promise<{ commit: string; moved: number }> {
    const changes = shardingMoves(await this.repo.listFiles(parent));
    const moved = changes.length / 2;
    if (moved === 0) return { commit: parent, moved };
    const commit = await this.repo.commit({ parent, ref, changes, author, message: layoutUpgradeMessage(moved) });
    // The same files at other paths: the same model.
    if (ref === MAIN_REF && this.current?.commit === parent) this.current = { commit, model: this.current.model, responses: new Map() };
    return { commit, moved };
  }

  /**
   * After a cold load that parsed many files the model cache did not have, or of another tree
   * than the one it lists, rewrites it (in the background) with this load's files and resources,
   * so the next start of a model at this commit lists and parses nothing.
   */
  private refreshModelCache(tree: string, files: ReadonlyMap<string, string>, model: Model, cache: ModelCache): void {
    // A small model loads as fast without it.
    if (files.size < MODEL_CACHE_REFRESH_AFTER) return;
    let missed = 0;
    for (const oid of files.values()) if (!cache.parsed.has(oid)) missed++;
    if (missed < MODEL_CACHE_REFRESH_AFTER && cache.listing?.tree === tree) return;
    const gitdir = this.repo.gitdir;
    const entries = function* () {
      for (const [path, oid] of files) {
        const place = classifyPath(path);
        if (place === null || place === 'organization') continue;
        const resource = collectionOf(model, place.kind).get(place.id);
        if (resource !== undefined) yield [oid, place.kind, resource] as const;
      }
    };
    scheduleModelCacheWrite(gitdir, () => writeModelCache(gitdir, { tree, files }, entries()));
  }

  /**
   * Builds the snapshot of `commit`, reusing every resource whose blob is unchanged since
   * `from`, so a tip moved by one commit costs what that commit changed.
   */
  private async load(commit: string, from: Snapshot | undefined): Promise<Snapshot> {
    const known = this.invalid.get(commit);
    if (known) throw known;
    // Cold: what this build parsed before comes from the model cache (model-cache.ts), and so
    // does the list of files when the commit has the tree the cache was written from; every
    // other file is read, from the blob cache or on a worker (Repo.readBlobs), in the order
    // loadModel parses them (readingOrder), so each is parsed as soon as it arrives. Warm:
    // only what changed since `from`, one by one.
    const cache = from ? undefined : await readModelCache(this.repo.gitdir).catch(() => undefined);
    try {
      const tree = cache === undefined ? undefined : await this.repo.treeOf(commit);
      const files = cache?.listing && cache.listing.tree === tree ? cache.listing.files : await this.repo.listFiles(commit);
      const previous = from ? await this.repo.listFiles(from.commit) : new Map<string, string>();
      const parsed = cache?.parsed;
      const unparsed = parsed ? new Map([...files].filter(([, oid]) => !parsed.has(oid))) : files;
      const blobs = from ? undefined : await this.repo.readBlobs(readingOrder(unparsed));
      const model = await loadModel(files, {
        read: async (oid) => (await (blobs?.get(oid) ?? this.repo.readBlob(oid))).toString('utf8'),
        reuse: from ? (path, oid) => (previous.get(path) === oid ? from.model : undefined) : undefined,
        parsed: parsed && ((kind, oid) => (parsed.get(oid)?.kind === kind ? parsed.get(oid)?.resource : undefined)),
      });
      if (cache !== undefined && tree !== undefined) this.refreshModelCache(tree, files, model, cache);
      const layout = layoutOf(files.keys());
      return {
        commit,
        model,
        responses: new ResponseCache(),
        schemasCurrent: schemasCurrent(files),
        ...(layout === 'flat' ? { layout } : {}),
      };
    } catch (err) {
      // A model that breaks a rule, and a commit whose objects are missing or of the wrong kind
      // (a power cut in the default mode, a ref set by hand): either way not a model to serve.
      if (
        err instanceof FileError ||
        err instanceof ModelError ||
        err instanceof ObjectNotFoundError ||
        err instanceof WrongObjectTypeError
      ) {
        // The rule's text in the answer, what it concerns beside it (ApiError.context), as every refusal.
        const refusal = new ApiError(
          503,
          `The model in git is invalid at commit ${commit}: ${err.message}`,
          {},
          err instanceof ModelError ? err.context : [],
        );
        if (this.invalid.size >= KEPT_VERDICTS) this.invalid.delete(this.invalid.keys().next().value!);
        this.invalid.set(commit, refusal);
        throw refusal;
      }
      throw err;
    }
  }
}

/** Whether a commit may be in the flat layout: it has a file directly in `components/` or `diagrams/`. */
async function mayBeFlat(repo: Repo, commit: string): Promise<boolean> {
  for (const kind of SHARDED_KINDS) {
    if ((await repo.fileNamesIn(commit, DIRECTORIES[kind])).some((name) => name.endsWith('.yaml'))) return true;
  }
  return false;
}
