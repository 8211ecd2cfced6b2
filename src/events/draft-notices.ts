/**
 * Draft events (CONTRACT.md §8, §9) read from the refs, not from the process that made them: a
 * draft is open, closed or merged by which ref holds it (store/branches.ts), so comparing the
 * draft refs now with those seen before tells what happened to drafts meanwhile — whoever did
 * it: this process, another one on the same data directory, or a `git push` creating
 * `drafts/<name>`. The SSE stream keeps what it saw in memory; a webhook subscription keeps
 * what it has delivered beside its cursor (webhook-store.ts), so none is lost to a restart.
 *
 * A state is `<state> <commit>` by draft name. Between two looks a draft may pass through
 * several states; each notice carries the state it leads to, so that a receiver that has had
 * the first of two (opened, then closed) is sent only the second.
 */
import { ApiError } from '../errors.js';
import { findDraftMerge, listDraftRefs } from '../store/branches.js';
import { readDraftRecords } from '../store/draft-records.js';

export type DraftStates = Record<string, string>;

export const DRAFT_EVENT_TYPES = ['draft.opened', 'draft.updated', 'draft.merged', 'draft.closed'] as const;
export type DraftEventType = (typeof DRAFT_EVENT_TYPES)[number];

/** What SSE frames and webhook payloads carry as `data`. */
export interface DraftEventData {
  name: string;
  state: 'open' | 'closed' | 'merged';
  /** The draft's head. */
  head: string;
  /** The commit the event is about: the merge commit on main for `draft.merged`, else the head. */
  commit: string;
  /** A closed draft opened again (`draft.opened`). */
  reopened?: boolean;
  /** When this process noticed it (ISO 8601). */
  time: string;
}

export interface DraftNotice {
  type: DraftEventType;
  data: DraftEventData;
  /** The draft's state once this notice is taken in (null: no draft of this name). */
  leadsTo: string | null;
  /** Names this notice among all of the draft's (stable across retries of one event). */
  key: string;
}

/** The draft refs as read at one look, with what the drafts' records say of the merged ones. */
export interface DraftStatesRead {
  states: DraftStates;
  /** Each merged draft's merge commit on main, by name, as its record has it. */
  mergeCommits: Map<string, string>;
  /**
   * The records file could not be read (store/draft-records.ts): the merge commits are unknown,
   * so a `draft.merged` waits (mergeUnknown) until the file is repaired, while main's changes
   * and every other draft event go on — a damaged file refuses the drafts, not main's stream.
   */
  recordsDamaged: boolean;
}

/** The organization's draft refs now, with where each merged draft's merge commit is. */
export async function readDraftStates(gitdir: string): Promise<DraftStatesRead> {
  const refs = await listDraftRefs(gitdir);
  const states: DraftStates = {};
  let merged = false;
  for (const [name, { state, commit }] of refs) {
    states[name] = `${state} ${commit}`;
    merged ||= state === 'merged';
  }
  const mergeCommits = new Map<string, string>();
  if (!merged) return { states, mergeCommits, recordsDamaged: false };
  try {
    for (const [name, record] of await readDraftRecords(gitdir)) {
      if (record.mergeCommit !== undefined) mergeCommits.set(name, record.mergeCommit);
    }
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { states, mergeCommits, recordsDamaged: true };
  }
  // A merge moves the draft's ref before it writes the record (drafts/drafts.ts markMerged), and a
  // record may be lost: a merged draft whose record names no merge commit has it found on main.
  for (const [name, { state, commit }] of refs) {
    if (state !== 'merged' || mergeCommits.has(name)) continue;
    const merge = await mergeFoundOnMain(gitdir, name, commit);
    if (merge !== undefined) mergeCommits.set(name, merge);
  }
  return { states, mergeCommits, recordsDamaged: false };
}

/**
 * Merge commits found on main, by git directory, draft and head: a merged draft's head never
 * moves, nor does the commit that merged it, so each is looked for once per process.
 */
const foundOnMain = new Map<string, Promise<string | undefined>>();

function mergeFoundOnMain(gitdir: string, name: string, head: string): Promise<string | undefined> {
  const key = `${gitdir}\0${name}\0${head}`;
  let found = foundOnMain.get(key);
  if (found === undefined) {
    found = findDraftMerge(gitdir, name, head).then((merge) => merge?.commit);
    foundOnMain.set(key, found);
    found.catch(() => foundOnMain.delete(key));
  }
  return found;
}

/** A `draft.merged` whose merge commit cannot be known until the drafts' records are repaired. */
export function mergeUnknown(notice: DraftNotice, read: DraftStatesRead): boolean {
  return notice.type === 'draft.merged' && read.recordsDamaged && !read.mergeCommits.has(notice.data.name);
}

/**
 * What happened to drafts between two looks, draft by draft (names in order): a draft that
 * appeared is opened; one whose open head moved is updated (a write, a push, main merged into
 * it); a draft that left `open` is closed or merged; a closed one open again is opened with
 * `reopened`; one that vanished (removed by hand) is closed.
 */
export function draftNotices(
  before: DraftStates,
  after: DraftStates,
  mergeCommits: ReadonlyMap<string, string>,
  time = new Date().toISOString(),
): DraftNotice[] {
  const notices: DraftNotice[] = [];
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  for (const name of names) {
    const was = before[name];
    const now = after[name];
    if (was === now) continue;
    const [wasState, wasHead] = was === undefined ? [undefined, undefined] : split(was);
    // Removed by hand after it was closed or merged: nothing more to tell.
    if (now === undefined && wasState !== 'open') continue;
    const [state, head] = now === undefined ? ['closed' as const, wasHead!] : split(now);
    const notice = (type: DraftEventType, leadsTo: string | null, extra: Partial<DraftEventData> = {}): void => {
      const commit = type === 'draft.merged' ? (mergeCommits.get(name) ?? head) : head;
      const stillOpen = type === 'draft.opened' || type === 'draft.updated';
      const data: DraftEventData = { name, state: stillOpen ? 'open' : state, head, commit, ...extra, time };
      notices.push({ type, data, leadsTo, key: `${type} ${name} ${was ?? '-'} ${leadsTo ?? '-'}` });
    };
    if (wasState !== 'open' && state !== 'open' && now !== undefined) {
      // Opened and already closed or merged before this look: both are told.
      if (wasState === undefined) notice('draft.opened', `open ${head}`);
      else if (wasState === state) continue;
    }
    if (state === 'open') {
      if (wasState === 'open') notice('draft.updated', now!);
      else notice('draft.opened', now!, wasState === 'closed' ? { reopened: true } : {});
      continue;
    }
    // Written to (or pushed to) and then merged or closed between two looks: the update is told first.
    if (wasState === 'open' && head !== wasHead) notice('draft.updated', `open ${head}`);
    if (state === 'merged') notice('draft.merged', now!);
    else notice('draft.closed', now ?? null);
  }
  return notices;
}

/** What a merge commit's title starts with (drafts/drafts.ts): a cheap first look before the draft refs are read. */
export const MERGE_TITLE_PREFIX = "Merged draft '";

/**
 * The draft events that must be told before a change when it is a draft's merge commit: that
 * draft's opening and updates not told yet (its `draft.merged` comes after the commit). A draft
 * opened and merged between two looks would otherwise be told opened after its own merge. The
 * draft is the one whose record names this merge commit, or else the one its title names: main
 * moves before the draft's ref and record do (drafts/drafts.ts), so a look in between finds the
 * draft still open.
 */
export function noticesBeforeMerge(
  before: DraftStates,
  after: DraftStates,
  mergeCommits: ReadonlyMap<string, string>,
  change: { id: string; title: string },
): DraftNotice[] {
  let name = [...mergeCommits].find(([, merge]) => merge === change.id)?.[0];
  if (name === undefined && change.title.startsWith(MERGE_TITLE_PREFIX)) {
    const named = change.title.slice(MERGE_TITLE_PREFIX.length, change.title.indexOf("'", MERGE_TITLE_PREFIX.length));
    if (after[named] !== undefined) name = named;
  }
  if (name === undefined) return [];
  const only = (states: DraftStates): DraftStates => (states[name] === undefined ? {} : { [name]: states[name]! });
  return draftNotices(only(before), only(after), mergeCommits).filter((notice) => notice.type !== 'draft.merged');
}

function split(state: string): ['open' | 'closed' | 'merged', string] {
  const [name, commit] = state.split(' ');
  return [name as 'open' | 'closed' | 'merged', commit];
}
