/**
 * What a draft is besides its branch: title, description, who opened it and when, and when it
 * was merged or closed. Kept in one small JSON file in the organization's git directory
 * (`<org>.git/c4store-drafts.json`), outside every tree, so that the model tree of a draft
 * stays exactly a model. Whether a draft is open, closed or merged is not stored here: its
 * ref says so (store/branches.ts), and a draft pushed without the API has no record at all
 * (its defaults are read from git). Written whole to a temporary file and renamed over the old
 * one, under the repository's write lock.
 *
 * readDraftRecords is the one way the file is read: every request that names a draft reads it
 * (drafts/drafts.ts locateDraft), so a damaged file refuses them all alike, never only some.
 */
import path from 'node:path';
import { ApiError } from '../errors.js';
import { isDraftName } from './branches.js';
import { replaceFile } from './durable-files.js';
import { readSigned, statSignature } from './signed-file.js';

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

export type DraftRecords = ReadonlyMap<string, Readonly<DraftRecord>>;

const FILE = 'c4store-drafts.json';

/**
 * The records as last read, by file: every `?draft=` request asks for them, and a stat (the
 * signature, as for keys.yaml) is all it costs while the file is unchanged. Another process's
 * save replaces the file by rename, which changes the signature.
 */
const lastRead = new Map<string, { signature: string; records: DraftRecords }>();

/** The drafts' records by name; none when there is no file. A damaged file: 503 naming it (unreadable). */
export async function readDraftRecords(gitdir: string): Promise<DraftRecords> {
  const file = path.join(gitdir, FILE);
  const cached = lastRead.get(file);
  if (cached !== undefined && cached.signature === statSignature(file)) return cached.records;
  const { signature, value } = await readSigned(file, recordsOf, unreadable);
  const records = value ?? new Map();
  lastRead.set(file, { signature, records });
  return records;
}

/**
 * The file's records, each whole: always written as `{"drafts": [...]}` of records of the shape
 * above, so anything else (cut short, not JSON, another shape, a record lacking a field or
 * naming a draft twice) is damage, never "no records" nor a record taken in part.
 */
function recordsOf(text: string): Map<string, DraftRecord> {
  const document: unknown = JSON.parse(text);
  const list = isObject(document) ? document.drafts : undefined;
  if (!Array.isArray(list)) throw new Error("its 'drafts' is not a list of records");
  const records = new Map<string, DraftRecord>();
  list.forEach((item: unknown, index) => {
    const record = recordOf(item, `record #${index + 1}`);
    if (records.has(record.name)) throw new Error(`record #${index + 1} names draft '${record.name}' a second time`);
    records.set(record.name, record);
  });
  return records;
}

function recordOf(item: unknown, which: string): DraftRecord {
  if (!isObject(item)) throw new Error(`${which} is not an object`);
  const text = (field: string, optional = false): string | undefined => {
    const value = item[field];
    if (value === undefined && optional) return undefined;
    if (typeof value !== 'string') throw new Error(`${which} has no text '${field}'`);
    return value;
  };
  const name = text('name')!;
  if (!isDraftName(name)) throw new Error(`${which} names no draft: '${name}' is not a draft name`);
  const title = text('title')!;
  const desc = item.desc === null ? null : text('desc')!;
  const author = text('author')!;
  const created = text('created')!;
  const mergedAt = text('mergedAt', true);
  const mergeCommit = text('mergeCommit', true);
  if (mergeCommit !== undefined && !/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(mergeCommit)) {
    throw new Error(`${which} has a 'mergeCommit' that is no commit id`);
  }
  const closedAt = text('closedAt', true);
  return {
    name,
    title,
    desc,
    author,
    created,
    ...(mergedAt === undefined ? {} : { mergedAt }),
    ...(mergeCommit === undefined ? {} : { mergeCommit }),
    ...(closedAt === undefined ? {} : { closedAt }),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * A damaged file is never taken for "no records" (the next save would write that over it, losing
 * every draft's title): drafts are refused (503) until someone repairs or removes it.
 */
function unreadable(why: string): ApiError {
  return new ApiError(
    503,
    `The drafts' records (${FILE} in the organization's repository) cannot be read: ${why} Repair the file, or remove it to keep the drafts with default titles.`,
  );
}

/** Replaces one draft's record (the caller holds the repository's write lock). */
export async function saveDraftRecord(gitdir: string, record: DraftRecord, durable = false): Promise<void> {
  const records = new Map(await readDraftRecords(gitdir));
  records.set(record.name, record);
  await replaceFile(path.join(gitdir, FILE), `${JSON.stringify({ drafts: [...records.values()] }, null, 2)}\n`, { mode: 0o644, durable });
}
