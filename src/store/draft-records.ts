/**
 * What a draft is besides its branch: title, description, who opened it and when, and when it
 * was merged or closed. Kept in one small JSON file in the organization's git directory
 * (`<org>.git/c4store-drafts.json`), outside every tree, so that the model tree of a draft
 * stays exactly a model. Whether a draft is open, closed or merged is not stored here: its
 * ref says so (store/branches.ts), and a draft pushed without the API has no record at all
 * (its defaults are read from git). Written whole to a temporary file and renamed over the old
 * one, under the repository's write lock.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { ApiError } from '../errors.js';
import { isCode, replaceFile } from './durable-files.js';

export interface DraftRecord {
  name: string;
  title: string;
  desc: string | null;
  author: string;
  /** ISO 8601, UTC. */
  created: string;
  mergedAt?: string;
  mergeCommit?: string;
  closedAt?: string;
}

const FILE = 'c4store-drafts.json';

export async function readDraftRecords(gitdir: string): Promise<Map<string, DraftRecord>> {
  let text: string;
  try {
    text = await fsp.readFile(path.join(gitdir, FILE), 'utf8');
  } catch (error) {
    if (isCode(error, 'ENOENT')) return new Map();
    throw error;
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw unreadable(`${(error as Error).message}`);
  }
  // Always written as `{"drafts": [...]}`: anything else is damage, never "no records".
  const records = document !== null && typeof document === 'object' ? (document as { drafts?: unknown }).drafts : undefined;
  if (!Array.isArray(records) || !records.every((r) => typeof (r as DraftRecord | null)?.name === 'string')) {
    throw unreadable("its 'drafts' is not a list of records with names");
  }
  return new Map((records as DraftRecord[]).map((record) => [record.name, record]));
}

/**
 * A damaged file is never taken for "no records" (the next save would write that over it, losing
 * every draft's title): drafts are refused (503) until someone repairs or removes it.
 */
function unreadable(why: string): ApiError {
  return new ApiError(
    503,
    `The drafts' records (${FILE} in the organization's repository) cannot be read: ${why}. Repair the file, or remove it to keep the drafts with default titles.`,
  );
}

/** Replaces one draft's record (the caller holds the repository's write lock). */
export async function saveDraftRecord(gitdir: string, record: DraftRecord, durable = false): Promise<void> {
  const records = await readDraftRecords(gitdir);
  records.set(record.name, record);
  await replaceFile(path.join(gitdir, FILE), `${JSON.stringify({ drafts: [...records.values()] }, null, 2)}\n`, { mode: 0o644, durable });
}
