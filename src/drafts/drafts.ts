import { ApiError } from '../errors.js';
import type { ModelDiff } from '../history/diff.js';
import { onFirstParentChain } from '../history/log.js';
import type { WriteOptions } from '../model/draft.js';
import { byIdOrRef } from '../model/draft.js';
import type { Diagram, Model } from '../model/types.js';
import { checkWriteBounds, revertTo } from '../model/write/revert.js';
import type { Limits } from '../limits/limits.js';
import { resolveCommitName } from '../service/commit-names.js';
import type { OrgModel, Preconditions, Snapshot } from '../service/org.js';
import {
  commitsBetween,
  draftRef,
  findDraftMerge,
  firstCommitBetween,
  isAncestor,
  isDraftName,
  reservedDraftName,
  DRAFT_NAME,
  DRAFT_NAME_MAX_LENGTH,
  listDraftRefs,
  mergeBase,
  moveRefs,
  type DraftRefState,
} from '../store/branches.js';
import { readDraftRecords, saveDraftRecord, type DraftRecord } from '../store/draft-records.js';
import { readRef, MAIN_REF } from '../store/refs.js';
import type { Author, ChangedFile, TreeChange } from '../store/repo.js';
import { classifyPath } from '../model/paths.js';
import { answeredDiff, conflictsAsAnswered } from './conflict-shape.js';
import { emitDraftEvent } from './events.js';
import { mergeModels, same, type MergeConflict, type Resolution } from './merge.js';
import { visualDiff, type VisualDiff } from './visual-diff.js';

/**
 * Drafts (CONTRACT §8): proposed changes to the model, each the git branch `drafts/<name>`.
 * Every write to a draft goes through the organization's one write path on that branch
 * (OrgModel.write with its ref); this module adds what is particular to drafts: opening,
 * listing, describing, merging either way, closing and reopening.
 */

export type DraftState = DraftRefState;

export interface DraftSummary {
  name: string;
  title: string;
  desc: string | null;
  state: DraftState;
  /** The merge base with `main`; for a merged draft, the one it had when it was merged. */
  base: string;
  head: string;
  author: string;
  created: string;
  mergedAt?: string;
  mergeCommit?: string;
  closedAt?: string;
}

/**
 * What a draft changes (`changes`, `/diff`): the diff of resources between two commits, in the
 * shape of `/diff`, and `organization` when it changes the organization itself (organization.yaml,
 * pushed over git: no resource, so not in the diff of resources, though a merge brings it in).
 */
export type DraftChanges = ModelDiff & { from: string; to: string };

export interface DraftDetails extends DraftSummary {
  changes: DraftChanges;
  behind: number;
  conflicts: MergeConflict[];
  /**
   * Why a merge now would be refused (a rule it would break, 409, or a bound it would pass, 413):
   * the refusal's text with what it concerns in parentheses
   * (ApiError.detailed; the merge's 409 says the text alone and the rest in its header, which
   * this 200 has no room for); absent when it would not.
   */
  problem?: string;
}

export interface DraftLocation {
  name: string;
  state: DraftState;
  ref: string;
  /** What the drafts' records say of it; none for a draft a push opened. */
  record: Readonly<DraftRecord> | undefined;
}

/**
 * Which two commits a draft's changes are read between (`changes`, `/diff`, the visual diff,
 * the draft page, the agents' `draft_diff`), and against which commit of `main` its base and
 * `behind` are counted.
 * - Open or closed: its merge base with `main` → its head, against `main` now.
 * - Merged: what its merge commit brought into `main`, the commit's first parent (`main` just
 *   before) → the merge commit, against that first parent; the base is the one it had then.
 *   Its merge base with `main` now is its own head, against which it changes nothing.
 * - Marked merged without a commit (`main` already held its head): it brought nothing then,
 *   so from = to = its head.
 */
interface Span {
  base: string;
  from: string;
  to: string;
  main: string;
}

function invalidName(name: string): ApiError {
  // Of the allowed characters, yet no branch name: saying what to use would name what was used.
  if (DRAFT_NAME.test(name)) {
    return new ApiError(
      400,
      `Invalid draft name '${name}': git takes no branch name with '..' or ending in '.' or '.lock'; choose another.`,
    );
  }
  return new ApiError(
    400,
    `Invalid draft name '${name}': use lowercase letters, digits, '.', '_' and '-', starting with a letter or digit (at most ${DRAFT_NAME_MAX_LENGTH}).`,
  );
}

/**
 * Where a draft lives now: its open branch, or the ref it is kept under once closed or merged,
 * and its record. Three ref reads and the records (a stat while they are unchanged), no git
 * process: every `?draft=` request starts here, so a draft is served only as a whole, ref and
 * record: while the records cannot be read, every request naming a draft is refused alike (503
 * naming the file), whether it reads, writes, draws or merges, and none acts on half a draft.
 */
export async function locateDraft(org: OrgModel, name: string): Promise<DraftLocation> {
  if (!isDraftName(name)) throw invalidName(name);
  for (const state of ['open', 'merged', 'closed'] as const) {
    const ref = draftRef(name, state);
    if ((await readRef(org.repo.gitdir, ref)) !== null) {
      return { name, state, ref, record: (await readDraftRecords(org.repo.gitdir)).get(name) };
    }
  }
  throw new ApiError(404, `Draft '${name}' does not exist.`);
}

/** The branch a write naming `?draft=` commits to; a merged or closed draft takes no writes. */
export async function writableDraft(org: OrgModel, name: string): Promise<string> {
  const draft = await locateDraft(org, name);
  if (draft.state === 'merged') throw new ApiError(409, `Draft '${name}' is merged; open a new draft for further changes.`);
  if (draft.state === 'closed') throw new ApiError(409, `Draft '${name}' is closed; reopen it to change it.`);
  return draft.ref;
}

/**
 * The model at the tip of draft `name` (`?draft=` reads): a draft merged or closed between being
 * found and read is read where its branch went (refs/drafts-merged/…, refs/drafts-closed/…), as
 * a read of it a moment later would be, not refused with its branch gone.
 */
export async function draftTip(org: OrgModel, name: string): Promise<Snapshot> {
  for (let attempt = 1; ; attempt++) {
    const { ref } = await locateDraft(org, name);
    try {
      return await org.tip(ref);
    } catch (err) {
      const gone = err instanceof ApiError && err.status === 409 && (await org.repo.readBranch(ref)) === null;
      if (!gone || attempt === 3) throw err;
    }
  }
}

/**
 * A write to draft `name`, given its branch. A draft merged or closed between being found and the
 * write taking the lock is told as one found so at once (`Draft 'x' is merged; …`), not as its
 * branch gone (`Branch 'drafts/x' no longer exists.`), which names no draft to a client.
 */
export async function writeToDraft<T>(org: OrgModel, name: string, write: (ref: string) => Promise<T>): Promise<T> {
  const ref = await writableDraft(org, name);
  try {
    return await write(ref);
  } catch (err) {
    if (err instanceof ApiError && err.status === 409 && (await org.repo.readBranch(ref)) === null) await writableDraft(org, name);
    throw err;
  }
}

export class Drafts {
  constructor(private readonly org: OrgModel) {}

  private get gitdir(): string {
    return this.org.repo.gitdir;
  }

  async open(request: { name: string; title?: string; desc?: string | null; from?: string }, author: Author): Promise<DraftSummary> {
    if (!isDraftName(request.name)) throw invalidName(request.name);
    const reserved = reservedDraftName(request.name);
    if (reserved !== undefined) throw new ApiError(400, `Invalid draft name '${request.name}': ${reserved}; choose another.`);
    const from = request.from === undefined ? undefined : await resolveCommitName(this.org.repo, request.from);
    const summary = await this.org.repo.withWriteLock(async () => {
      if ((await listDraftRefs(this.gitdir)).has(request.name)) throw new ApiError(409, `Draft '${request.name}' already exists.`);
      const main = await this.org.repo.readHead();
      if (main === null) throw new Error(`Organization ${this.org.slug} has no main branch`);
      // A state main has had: a commit of its first-parent chain, as revert and history count them
      // (a merged draft's own commit is an ancestor of main, but main never held its model).
      if (from !== undefined && !(await onFirstParentChain(this.gitdir, from, main))) {
        throw new ApiError(400, `'from' must name a revision of main; ${request.from} is not one.`);
      }
      const start = from ?? main;
      const record: DraftRecord = {
        name: request.name,
        title: request.title ?? request.name,
        desc: request.desc ?? null,
        author: author.name,
        created: now(),
      };
      // The record first: a crash between the two leaves a record no ref names, which the next open of the name replaces.
      await saveDraftRecord(this.gitdir, record);
      // No commit: the branch starts at `from`.
      await moveRefs(this.gitdir, [{ action: 'create', ref: draftRef(request.name), commit: start }]);
      const { author: who, created } = record;
      return {
        name: record.name,
        title: record.title,
        desc: record.desc,
        state: 'open' as const,
        base: start,
        head: start,
        author: who,
        created,
      };
    });
    emitDraftEvent({ type: 'opened', org: this.org.slug, draft: summary.name, commit: summary.head });
    return summary;
  }

  async list(state: DraftState = 'open'): Promise<DraftSummary[]> {
    const [refs, records, main] = await Promise.all([listDraftRefs(this.gitdir), readDraftRecords(this.gitdir), this.mainCommit()]);
    const drafts: DraftSummary[] = [];
    for (const [name, ref] of [...refs].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (ref.state !== state) continue;
      const record = records.get(name);
      drafts.push(await this.summaryOf(name, ref, record, await this.spanOf(name, ref, record, main)));
    }
    return drafts;
  }

  /** `publicUrl`: where diagrams are viewed, for the `url` of a diagram in a conflict (conflict-shape.ts). */
  async get(name: string, publicUrl: string): Promise<DraftDetails> {
    const location = await locateDraft(this.org, name);
    const head = await this.headOf(location);
    const { record } = location;
    const span = await this.spanOf(name, { state: location.state, commit: head }, record, await this.mainCommit());
    const summary = await this.summaryOf(name, { state: location.state, commit: head }, record, span);
    const [before, after] = await Promise.all([this.org.revision(span.from), this.org.revision(span.to)]);
    const behind = await commitsBetween(this.gitdir, span.base, span.main);
    let conflicts: MergeConflict[] = [];
    let problem: string | undefined;
    if (location.state === 'open' && behind > 0) {
      const main = (await this.org.tip()).model;
      const outcome = mergeModels(before.model, main, after.model);
      if (outcome.outcome === 'conflicts') {
        conflicts = conflictsAsAnswered(outcome.conflicts, { base: before.model, main, draft: after.model }, publicUrl);
      }
      if (outcome.outcome === 'invalid') problem = outcome.error.detailed;
      // The merge's write would be refused past the bounds (413): said beforehand too.
      if (outcome.outcome === 'merged') problem = boundsProblem(main, outcome.model, this.org.limits);
    }
    return {
      ...summary,
      changes: changesBetween(before, after, publicUrl),
      behind,
      conflicts,
      ...(problem === undefined ? {} : { problem }),
    };
  }

  /** What the draft page shows: the draft as GET gives it, and the models its changes are read between. */
  async review(name: string, publicUrl: string): Promise<{ details: DraftDetails; before: Model; after: Model }> {
    const details = await this.get(name, publicUrl);
    const [before, after] = await Promise.all([this.org.revision(details.changes.from), this.org.revision(details.changes.to)]);
    return { details, before: before.model, after: after.model };
  }

  /**
   * The draft against `main` at its base: what a reviewer reads (a merged draft: what its merge
   * brought into `main`). `publicUrl`: for a changed diagram's `url`, as in `get`.
   */
  async diff(name: string, publicUrl: string): Promise<{ snapshot: Snapshot; diff: DraftChanges }> {
    const { before, after } = await this.compared(name);
    return { snapshot: after, diff: changesBetween(before, after, publicUrl) };
  }

  /**
   * One diagram of the draft against `main` at the draft's base, ready to draw: what the draft
   * adds, removes and changes on it (visual-diff.ts). Against the base, not main's tip, so
   * that only the draft's own work is marked; a merged draft's, as its merge brought it in.
   */
  async comparison(name: string, diagramId: string): Promise<{ snapshot: Snapshot } & VisualDiff> {
    const { before, after } = await this.compared(name);
    const was = before.model.diagrams.get(diagramId);
    const diagram = after.model.diagrams.get(diagramId);
    if (diagram) return { snapshot: after, ...visualDiff({ diagram: was, model: before.model }, { diagram, model: after.model }) };
    // One the draft deleted: as main had it, every element marked removed.
    if (was) return { snapshot: after, ...visualDiff({ diagram: was, model: before.model }, { diagram: undefined, model: after.model }) };
    throw new ApiError(404, `Diagram with id '${diagramId}' does not exist.`);
  }

  /**
   * The diagram `idOrRef` names (its id, or else its ref) as `main` had it where the draft began,
   * when the draft deleted it (a merged draft: when its merge took it out of `main`); undefined
   * otherwise. Read between the same two commits as the draft's changes, so that the visual diff
   * can draw a deletion as it draws every other removed element.
   */
  async deletedDiagram(name: string, idOrRef: string): Promise<Diagram | undefined> {
    const { before, after } = await this.compared(name);
    const was = byIdOrRef(before.model.diagrams, idOrRef);
    return was === undefined || after.model.diagrams.has(was.id) ? undefined : was;
  }

  /** The snapshots a draft's changes are read between (see Span). */
  private async compared(name: string): Promise<{ before: Snapshot; after: Snapshot }> {
    const location = await locateDraft(this.org, name);
    const head = await this.headOf(location);
    const span = await this.spanOf(name, { state: location.state, commit: head }, location.record, await this.mainCommit());
    const [before, after] = await Promise.all([this.org.revision(span.from), this.org.revision(span.to)]);
    return { before, after };
  }

  /**
   * Merges the draft into `main` (`into: 'main'`), or `main` into the draft (`into: 'draft'`,
   * the draft catching up): the pure three-way merge, then the merged model written by the
   * one write path as one merge commit on the branch merged into (first parent: its tip).
   */
  async merge(
    name: string,
    into: 'main' | 'draft',
    resolutions: readonly Resolution[],
    write: Preconditions & {
      author: Author;
      options: WriteOptions;
      /** The draft's head as its reviewer saw it (the draft page's merge): a draft that moved since is not merged. */
      reviewed?: string;
      /** Where diagrams are viewed, for the `url` of a diagram in a conflict (conflict-shape.ts). */
      publicUrl: string;
    },
  ): Promise<{ snapshot: Snapshot; draft: DraftSummary; committed: boolean; mergedHead?: string }> {
    settledOnce(resolutions);
    for (let attempt = 1; ; attempt++) {
      try {
        // Found again at each attempt: a merge or close by another request (or process) in
        // between is then told as such, not as the branch gone from under the read.
        const location = await locateDraft(this.org, name);
        if (location.state !== 'open')
          throw new ApiError(409, `Draft '${name}' is ${location.state}; only an open draft can be merged or updated.`);
        const [mainTip, draftTip] = await Promise.all([this.org.tip(), this.org.tip(location.ref).catch(movedAway)]);
        if (write.reviewed !== undefined && draftTip.commit !== write.reviewed) throw new DraftChanged(name, write.reviewed);
        const [target, source] = into === 'main' ? [mainTip, draftTip] : [draftTip, mainTip];
        const [targetRef, sourceRef] = into === 'main' ? [MAIN_REF, location.ref] : [location.ref, MAIN_REF];
        // Worked out before the lock, so that loading an older base holds up no other write; again
        // under it only for what moved meanwhile (main written to while a merge into it waits its turn).
        let plan = await this.mergePlan(name, target.commit, source.commit);
        // The records are written once main has the merge: a file that cannot be read refuses the
        // merge now, before anything moves, rather than after main moved and the draft did not.
        if (into === 'main') await readDraftRecords(this.gitdir);
        // A draft a push opened has no record: who and when are read from its first own commit,
        // which the update's merge commit would become. Kept as they are now, before it is made.
        else if (!(await readDraftRecords(this.gitdir)).has(name)) {
          await saveDraftRecord(this.gitdir, await this.defaultRecord(name, draftTip.commit, plan.base));
        }
        /** A merge into main: the draft as marked merged, or as it stays open when a push moved it meanwhile. */
        let marked: DraftSummary | undefined;
        let otherFiles: TreeChange[] = [];
        const { snapshot } = await this.org.write(
          {
            ref: targetRef,
            ifMatch: write.ifMatch,
            ifNoneMatch: write.ifNoneMatch,
            author: write.author,
            title: into === 'main' ? `Merged draft '${name}'` : `Updated draft '${name}' with main`,
            options: write.options,
            // Already taken in: nothing to commit (a draft merged this way is still marked merged).
            mergedParent: () => (plan.upToDate ? undefined : plan.source),
            otherFiles: () => otherFiles,
            // A merged draft's ref moves under the same lock as main: no write slips in between.
            whileLocked: into === 'main' ? async (commit) => void (marked = await this.markMerged(name, plan.source, commit)) : undefined,
          },
          async (draft, at) => {
            // Under the lock: the tips as they now are. The branch written is `at`; the other is read.
            const sourceCommit = await readRef(this.gitdir, sourceRef);
            // The draft merged or closed meanwhile: found again, and told so.
            if (sourceCommit === null) throw new Moved();
            if (at !== plan.target || sourceCommit !== plan.source) plan = await this.mergePlan(name, at, sourceCommit);
            const head = into === 'main' ? plan.source : plan.target;
            if (write.reviewed !== undefined && head !== write.reviewed) throw new DraftChanged(name, write.reviewed);
            otherFiles = [];
            if (plan.upToDate) return;
            otherFiles = await this.otherFilesMerged(name, plan);
            const sourceModel = (await this.org.revision(plan.source)).model;
            const [mainModel, draftModel] = into === 'main' ? [draft.base, sourceModel] : [sourceModel, draft.base];
            const outcome = mergeModels(plan.baseModel, mainModel, draftModel, resolutions);
            if (outcome.outcome === 'conflicts') {
              const sides = { base: plan.baseModel, main: mainModel, draft: draftModel };
              throw new MergeConflicts(name, conflictsAsAnswered(outcome.conflicts, sides, write.publicUrl));
            }
            if (outcome.outcome === 'invalid') throw outcome.error.withStatus(409);
            revertTo(draft, outcome.model);
          },
        );
        const committed = snapshot.commit !== plan.target;
        if (into === 'main') {
          // Set by whileLocked, which every write that did not throw has run.
          const summary = marked!;
          if (summary.state === 'merged') emitDraftEvent({ type: 'merged', org: this.org.slug, draft: name, commit: snapshot.commit });
          return { snapshot, draft: summary, committed, mergedHead: plan.source };
        }
        if (committed) emitDraftEvent({ type: 'updated', org: this.org.slug, draft: name, commit: snapshot.commit });
        return { snapshot, draft: await this.openSummary(name, snapshot.commit), committed };
      } catch (err) {
        if (!(err instanceof Moved) || attempt === 3) {
          if (err instanceof Moved)
            throw new ApiError(503, 'The model kept changing during this merge; retry shortly.', { 'Retry-After': '1' });
          throw err;
        }
      }
    }
  }

  /**
   * The files outside the model (a README, notes pushed beside it: c4store's own `.c4store/`
   * aside) as git would merge them: what `source` changed of them since the base and `target`
   * left alone is brought; one both changed, each its own way, refuses the merge (409) — the model
   * merge has no field to settle it by, and leaving it out would drop the change for good, since
   * git then counts the source as merged.
   */
  private async otherFilesMerged(name: string, plan: MergePlan): Promise<TreeChange[]> {
    // Each such file as it is after, its mode with its content: a script made executable is a change.
    const outside = (changes: ChangedFile[]) =>
      new Map(
        changes
          .filter(({ path }) => classifyPath(path) === null && !path.startsWith('.c4store/'))
          .map((c) => [c.path, c.after === null ? null : { blob: c.after, mode: c.mode! }]),
      );
    const [theirs, ours] = await Promise.all([
      this.org.repo.changedFiles(plan.base, plan.source).then(outside),
      this.org.repo.changedFiles(plan.base, plan.target).then(outside),
    ]);
    const files: TreeChange[] = [];
    for (const [path, after] of theirs) {
      if (!ours.has(path)) files.push(after === null ? { path, content: null } : { path, ...after });
      else if (!same(ours.get(path), after)) {
        throw new ApiError(
          409,
          `Draft '${name}' and main both changed '${path}', which is no model file: merge it with git (main into the draft's branch) and push the draft.`,
        );
      }
    }
    await this.refuseFileFolderClashes(name, plan.target, files);
    return files;
  }

  /**
   * Refuses (409) what a merge would bring where the branch merged into has the other of file and
   * folder: a file where it has a folder, or files under a path that is a file there (git's
   * file/folder conflict, which no field settles, and which no tree can hold). A side that itself
   * made a folder a file (deleting every file in it), or a file a folder (deleting the file), is
   * a change like any other: brought.
   */
  private async refuseFileFolderClashes(name: string, target: string, files: readonly TreeChange[]): Promise<void> {
    const deleted = new Set(files.filter((file) => 'content' in file && file.content === null).map((file) => file.path));
    // Files brought into one folder ask about it once.
    const kinds = new Map<string, Promise<'file' | 'folder' | null>>();
    const kindOf = (path: string) => {
      let kind = kinds.get(path);
      if (kind === undefined) kinds.set(path, (kind = this.org.repo.pathKind(target, path)));
      return kind;
    };
    const clash = (path: string) =>
      new ApiError(
        409,
        `Draft '${name}' and main disagree on '${path}', which is no model file: a file on one side, a folder on the other. Merge it with git (main into the draft's branch) and push the draft.`,
      );
    for (const { path } of files) {
      if (deleted.has(path)) continue;
      for (let end = path.indexOf('/'); end !== -1; end = path.indexOf('/', end + 1)) {
        const folder = path.slice(0, end);
        if (!deleted.has(folder) && (await kindOf(folder)) === 'file') throw clash(folder);
      }
      if ((await kindOf(path)) === 'folder' && (await this.org.repo.filesUnder(target, path)).some((file) => !deleted.has(file))) {
        throw clash(path);
      }
    }
  }

  /**
   * What merging `source` into `target` (commits) starts from: their merge base and its model,
   * and whether `target` already holds `source` (then there is nothing to merge).
   */
  private async mergePlan(name: string, target: string, source: string): Promise<MergePlan> {
    const base = await mergeBase(this.gitdir, target, source);
    if (base === null) throw new ApiError(409, `Draft '${name}' shares no history with main; it cannot be merged.`);
    const [upToDate, baseModel] = await Promise.all([isAncestor(this.gitdir, source, target), this.org.revision(base)]);
    return { target, source, base, upToDate, baseModel: baseModel.model };
  }

  /** Closes an open draft: its branch moves to `refs/drafts-closed/<name>` (kept, and reopenable). */
  async close(name: string): Promise<DraftSummary> {
    return this.move(name, 'open', 'closed', 'closed');
  }

  async reopen(name: string): Promise<DraftSummary> {
    return this.move(name, 'closed', 'open', 'reopened');
  }

  private async move(name: string, from: DraftState, to: DraftState, event: 'closed' | 'reopened'): Promise<DraftSummary> {
    const summary = await this.org.repo.withWriteLock(async () => {
      const location = await locateDraft(this.org, name);
      if (location.state !== from) {
        throw new ApiError(
          409,
          `Draft '${name}' is ${location.state}; only ${from === 'open' ? 'an open draft can be closed' : 'a closed draft can be reopened'}.`,
        );
      }
      const head = (await readRef(this.gitdir, location.ref))!;
      const records = await readDraftRecords(this.gitdir);
      const record = records.get(name);
      if (record) {
        const { closedAt: _, ...rest } = record;
        await saveDraftRecord(this.gitdir, to === 'closed' ? { ...rest, closedAt: now() } : rest);
      }
      await moveRefs(this.gitdir, [
        { action: 'delete', ref: location.ref, expected: head },
        { action: 'create', ref: draftRef(name, to), commit: head },
      ]);
      const ref = { state: to, commit: head };
      const kept = (await readDraftRecords(this.gitdir)).get(name);
      return this.summaryOf(name, ref, kept, await this.spanOf(name, ref, kept, await this.mainCommit()));
    });
    emitDraftEvent({ type: event, org: this.org.slug, draft: name, commit: summary.head });
    return summary;
  }

  /**
   * Under the write lock, right after the merge commit: the ref says `merged`, then the record.
   * Pushes take no lock: one to the draft's branch may have landed since the merge read `head`.
   * Then `main` holds the merge of `head`, and the draft stays open at the pushed head, for a next
   * merge to bring what was pushed: marked merged, it would be lost to that merge. The ref moves
   * first, so that the record never says merged of a draft whose branch moved on.
   */
  private async markMerged(name: string, head: string, mergeCommit: string): Promise<DraftSummary> {
    await this.org.testPauses?.afterMergeCommit?.(name);
    try {
      await moveRefs(this.gitdir, [
        { action: 'delete', ref: draftRef(name), expected: head },
        { action: 'create', ref: draftRef(name, 'merged'), commit: head },
      ]);
    } catch (err) {
      const pushed = await readRef(this.gitdir, draftRef(name));
      if (pushed === null || pushed === head) throw err;
      return this.openSummary(name, pushed);
    }
    const records = await readDraftRecords(this.gitdir);
    // The draft's own commits are those main lacked before the merge: from main as it was then.
    const [merge] = await this.org.repo.log(mergeCommit, 1);
    const mainBefore = merge !== undefined && merge.parents.length === 2 && merge.parents[1] === head ? merge.parents[0]! : mergeCommit;
    const record =
      records.get(name) ?? (await this.defaultRecord(name, head, (await mergeBase(this.gitdir, mainBefore, head)) ?? undefined));
    const merged = { ...record, mergedAt: now(), mergeCommit };
    await saveDraftRecord(this.gitdir, merged);
    const ref = { state: 'merged' as const, commit: head };
    return this.summaryOf(name, ref, merged, await this.spanOf(name, ref, merged, mergeCommit));
  }

  /** An open draft at `head`, with its record (title, desc, author, created), as every other answer about it has them. */
  private async openSummary(name: string, head: string): Promise<DraftSummary> {
    const ref = { state: 'open' as const, commit: head };
    const record = (await readDraftRecords(this.gitdir)).get(name);
    return this.summaryOf(name, ref, record, await this.spanOf(name, ref, record, await this.mainCommit()));
  }

  private async mainCommit(): Promise<string> {
    const main = await this.org.repo.readHead();
    if (main === null) throw new Error(`Organization ${this.org.slug} has no main branch`);
    return main;
  }

  private async headOf(location: DraftLocation): Promise<string> {
    const head = await readRef(this.gitdir, location.ref);
    if (head === null) throw new ApiError(404, `Draft '${location.name}' does not exist.`);
    return head;
  }

  private async summaryOf(
    name: string,
    ref: { state: DraftState; commit: string },
    record: DraftRecord | undefined,
    span: Span,
  ): Promise<DraftSummary> {
    const known = record ?? (await this.defaultRecord(name, ref.commit, span.base));
    return {
      name,
      title: known.title,
      desc: known.desc,
      state: ref.state,
      base: span.base,
      head: ref.commit,
      author: known.author,
      created: known.created,
      ...(known.mergedAt === undefined ? {} : { mergedAt: known.mergedAt, mergeCommit: known.mergeCommit }),
      ...(known.closedAt === undefined || ref.state !== 'closed' ? {} : { closedAt: known.closedAt }),
    };
  }

  /** See Span. `main`: the tip of main now. */
  private async spanOf(
    name: string,
    ref: { state: DraftState; commit: string },
    record: DraftRecord | undefined,
    main: string,
  ): Promise<Span> {
    const head = ref.commit;
    if (ref.state !== 'merged') {
      const base = (await mergeBase(this.gitdir, main, head)) ?? head;
      return { base, from: base, to: head, main };
    }
    const merge = await this.mergeCommitOf(name, head, record?.mergeCommit, main);
    if (merge === undefined) return { base: head, from: head, to: head, main: record?.mergeCommit ?? head };
    const base = (await mergeBase(this.gitdir, merge.firstParent, head)) ?? head;
    return { base, from: merge.firstParent, to: merge.commit, main: merge.firstParent };
  }

  /**
   * The commit that merged a draft into `main`: its recorded `mergeCommit` when that is one
   * (second parent: the draft's head, message `Merged draft '<name>'`), else the first such
   * commit on main's first-parent history (a draft whose record is lost, or not yet written).
   * Undefined for a draft marked merged without a commit: its recorded `mergeCommit` is then
   * `main` as it was.
   */
  private async mergeCommitOf(
    name: string,
    head: string,
    recorded: string | undefined,
    main: string,
  ): Promise<{ commit: string; firstParent: string } | undefined> {
    if (recorded === undefined) return findDraftMerge(this.gitdir, name, head, main);
    const [commit] = await this.org.repo.log(recorded, 1);
    const isMerge =
      commit !== undefined &&
      commit.parents.length === 2 &&
      commit.parents[1] === head &&
      commit.message.startsWith(`Merged draft '${name}'`);
    return isMerge ? { commit: recorded, firstParent: commit.parents[0] } : undefined;
  }

  /**
   * A draft opened by a push has no record: its name is its title, its first own commit says who
   * and when (one with no commit of its own, pushed where main already was: its head).
   */
  private async defaultRecord(name: string, head: string, base?: string): Promise<DraftRecord> {
    const own = base === undefined || base === head ? null : await firstCommitBetween(this.gitdir, base, head);
    const first = own ?? (await firstCommitBetween(this.gitdir, null, head));
    return { name, title: name, desc: null, author: first?.author ?? '', created: first?.time ?? '' };
  }
}

/** Why a write of `target` over `current` would be refused past the bounds (checkWriteBounds); undefined when it would not. */
function boundsProblem(current: Model, target: Model, limits: Limits): string | undefined {
  try {
    checkWriteBounds(current, target, limits);
    return undefined;
  } catch (err) {
    if (err instanceof ApiError) return err.detailed;
    throw err;
  }
}

/** What a draft changes between the two snapshots its changes are read between (see Span), as the API answers it. */
function changesBetween(before: Snapshot, after: Snapshot, publicUrl: string): DraftChanges {
  return { from: before.commit, to: after.commit, ...answeredDiff(before.model, after.model, publicUrl) };
}

/** ISO 8601 in whole seconds, UTC. */
function now(): string {
  return isoSeconds(new Date());
}

/** A time as ISO 8601 in whole seconds, UTC: as every draft time is written. */
function isoSeconds(time: Date): string {
  return time.toISOString().replace(/\.\d+Z$/, 'Z');
}

/** The draft moved away (merged or closed) between being found and the merge taking the lock: found again. */
class Moved extends Error {}

/** See Drafts.mergePlan: the commits merged (the branch merged into, the one merged in) and their base. */
interface MergePlan {
  target: string;
  source: string;
  base: string;
  baseModel: Model;
  upToDate: boolean;
}

/** A branch read that found it gone (moved by a merge or a close meanwhile): tried again. */
function movedAway(err: unknown): never {
  throw err instanceof ApiError && err.status === 409 ? new Moved() : err;
}

/** A merge asked for the draft as it was at `reviewed`, and it has moved since. */
export class DraftChanged extends ApiError {
  constructor(name: string, reviewed: string) {
    super(412, `Draft '${name}' has changed since ${reviewed}: review it again before merging.`);
  }
}

/** 409 with the conflicts beside the error text (the route answers it). */
export class MergeConflicts extends ApiError {
  constructor(
    name: string,
    readonly conflicts: MergeConflict[],
  ) {
    super(
      409,
      `Draft '${name}' conflicts with main on ${conflicts.length} field${conflicts.length === 1 ? '' : 's'}; settle each with a resolution.`,
    );
  }
}

/**
 * Resolutions that settle one field both ways say nothing a merge can take: refused (400), rather
 * than the later one silently winning. The same resolution twice is no disagreement.
 */
function settledOnce(resolutions: readonly Resolution[]): void {
  const seen = new Map<string, number>();
  for (const [index, r] of resolutions.entries()) {
    const key = JSON.stringify([r.kind, r.id, r.field]);
    const earlier = seen.get(key);
    if (earlier === undefined) seen.set(key, index);
    else if (resolutions[earlier]!.take !== r.take) {
      throw new ApiError(
        400,
        `Resolutions ${earlier} and ${index} both settle field '${r.field}' of ${r.kind} '${r.id}', one with take '${resolutions[earlier]!.take}' and the other with '${r.take}': give one.`,
      );
    }
  }
}
