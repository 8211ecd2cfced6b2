import { ApiError, ModelError } from '../errors.js';
import { Draft, type WriteOptions } from '../model/draft.js';
import { SCHEMA_FILES, schemasCurrent } from '../editor/schemas.js';
import { FileError, ORGANIZATION_FILE } from '../model/files.js';
import { loadModel } from '../model/load.js';
import type { Model } from '../model/types.js';
import { StaleHeadError, type Author, type Repo } from '../store/repo.js';
import { commitMessage } from './commit-message.js';

/** The model at one commit, plus responses already serialized from it. */
export interface Snapshot {
  readonly commit: string;
  readonly model: Model;
  /** Serialized GET bodies, built once per commit. */
  readonly responses: Map<string, Buffer>;
  /** False when the tree lacks the current `.c4store/schemas/` (an older repository): the next write adds them. */
  readonly schemasCurrent?: boolean;
}

export interface WriteRequest {
  /** `If-Match`: the commit the client last read. */
  ifMatch?: string;
  author: Author;
  /** First words of the commit message: `POST /api/external/component`. */
  title: string;
  options: WriteOptions;
}

const COMMIT_ID = /^[0-9a-f]{40}$/;
const KEPT_SNAPSHOTS = 8;
/** Writes one organization lets wait for its lock; more are refused, not queued without bound. */
export const DEFAULT_MAX_WAITING_WRITES = 256;
const MAX_ATTEMPTS = 3;

/**
 * One organization's model: reads come from an in-memory snapshot keyed by the commit of
 * `main`; a write runs the pure model step on the snapshot under the organization's write
 * lock and commits the files it changed.
 */
export class OrgModel {
  private current: Snapshot | undefined;
  private loading: { commit: string; snapshot: Promise<Snapshot> } | undefined;
  private readonly older = new Map<string, Snapshot>();
  /**
   * Commits found invalid, with their 503. A commit never changes, so neither does the
   * verdict: while `main` stays on a broken commit (pushed behind the service's back), every
   * request is refused at once instead of re-reading and re-checking the whole tree.
   */
  private readonly invalid = new Map<string, ApiError>();
  private waitingWrites = 0;

  constructor(
    readonly slug: string,
    readonly repo: Repo,
    private readonly maxWaitingWrites = DEFAULT_MAX_WAITING_WRITES,
  ) {}

  /** The model at the tip of `main`; a tip moved by another process is loaded here. */
  async head(): Promise<Snapshot> {
    const commit = await this.repo.readHead();
    if (commit === null) throw new Error(`Organization ${this.slug} has no main branch`);
    if (this.current?.commit === commit) return this.current;
    // Requests arriving while a commit loads share that one load.
    if (this.loading?.commit !== commit) {
      const loading = { commit, snapshot: this.load(commit, this.current) };
      this.loading = loading;
      loading.snapshot.then(
        (snapshot) => {
          this.current = snapshot;
          if (this.loading === loading) this.loading = undefined;
        },
        () => {
          if (this.loading === loading) this.loading = undefined;
        },
      );
    }
    return this.loading.snapshot;
  }

  /** The model as of an earlier commit, for `?at=`. */
  async at(commit: string): Promise<Snapshot> {
    if (this.current?.commit === commit) return this.current;
    const kept = this.older.get(commit);
    if (kept) return kept;
    if (!COMMIT_ID.test(commit) || !(await this.repo.hasCommit(commit))) {
      throw new ApiError(404, `Commit '${commit}' does not exist.`);
    }
    const snapshot = await this.load(commit, this.current);
    if (this.older.size >= KEPT_SNAPSHOTS) this.older.delete(this.older.keys().next().value!);
    this.older.set(commit, snapshot);
    return snapshot;
  }

  async write<R>(request: WriteRequest, step: (draft: Draft) => Promise<R> | R): Promise<{ snapshot: Snapshot; result: R }> {
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

  private writeUnderLock<R>(request: WriteRequest, step: (draft: Draft) => Promise<R> | R): Promise<{ snapshot: Snapshot; result: R }> {
    return this.repo.withWriteLock(async () => {
      const base = await this.head();
      if (request.ifMatch !== undefined && request.ifMatch !== '*' && request.ifMatch !== base.commit) {
        throw new ApiError(412, `The model has changed since ${request.ifMatch}.`);
      }
      const draft = new Draft(base.model, request.options);
      const result = await step(draft);
      if (draft.changes.length === 0) return { snapshot: base, result };
      // An older repository gets the editor schemas with its next write, beside what the write changes.
      const schemas = base.schemasCurrent === false ? SCHEMA_FILES : [];
      const commit = await this.repo.commit({
        parent: base.commit,
        changes: [...draft.changes.map(({ path, content }) => ({ path, content })), ...schemas],
        author: request.author,
        message: commitMessage(request.title, draft.changes, request.options.apiContext),
      });
      this.current = { commit, model: draft.model, responses: new Map() };
      return { snapshot: this.current, result };
    });
  }

  /**
   * Builds the snapshot of `commit`, reusing every resource whose blob is unchanged since
   * `from`, so a tip moved by one commit costs what that commit changed.
   */
  private async load(commit: string, from: Snapshot | undefined): Promise<Snapshot> {
    const known = this.invalid.get(commit);
    if (known) throw known;
    const files = await this.repo.listFiles(commit);
    const previous = from ? await this.repo.listFiles(from.commit) : new Map<string, string>();
    try {
      // Cold: every file is read, from the blob cache or on a worker (Repo.readBlobs), each
      // parsed as soon as it arrives. Warm: only what changed since `from`, one by one.
      // organization.yaml first: loadModel needs it before any other file, and it sorts last.
      const organization = files.get(ORGANIZATION_FILE);
      const order = organization === undefined ? files.values() : [organization, ...files.values()];
      const blobs = from ? undefined : await this.repo.readBlobs(order);
      const model = await loadModel(files, {
        read: async (oid) => (await (blobs?.get(oid) ?? this.repo.readBlob(oid))).toString('utf8'),
        reuse: from ? (path, oid) => (previous.get(path) === oid ? from.model : undefined) : undefined,
      });
      return { commit, model, responses: new Map(), schemasCurrent: schemasCurrent(files) };
    } catch (err) {
      if (err instanceof FileError || err instanceof ModelError) {
        const refusal = new ApiError(503, `The model in git is invalid at commit ${commit}: ${err.message}`);
        if (this.invalid.size >= KEPT_SNAPSHOTS) this.invalid.delete(this.invalid.keys().next().value!);
        this.invalid.set(commit, refusal);
        throw refusal;
      }
      throw err;
    }
  }
}
