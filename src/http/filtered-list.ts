import type { Context } from 'koa';
import { ApiError } from '../errors.js';
import {
  filtersKey,
  hasFilters,
  LIST_FILTERS,
  LIST_PARAMETERS,
  listMatcher,
  readFilters,
  SearchError,
  type Filters,
  type ListKind,
} from '../search/filters.js';
import type { Snapshot } from '../service/org.js';
import { mapped, Slice } from '../slices.js';
import { sendList } from './resource.js';
import { BoundedAnswers } from './bounded-answers.js';
import { sendFromSnapshot } from './respond.js';

/**
 * The list GETs of the current form with their filters (`GET /components?name=…&state=…`,
 * src/search/filters.ts). A filtered list is answered like the whole list: serialized once per
 * commit, filters and format, the scan and the build in slices of the event loop. Unlike the
 * whole lists, whose keys are few, filtered answers are kept in one store of bounded size for the
 * whole server, least recently used first out: filters are the client's to vary without end.
 */

export const DEFAULT_FILTERED_ANSWER_BYTES = 64 * 1024 * 1024;

/** The server's store of filtered answers (every organization's, every snapshot's; also a component's dependencies). */
export const filteredAnswers = new BoundedAnswers(DEFAULT_FILTERED_ANSWER_BYTES);

/** Items scanned between looks at the clock. */
const SCAN_PER_LOOK = 512;

async function filterInSlices<T>(items: Iterable<T>, matches: (item: T) => boolean): Promise<T[]> {
  const found: T[] = [];
  const slice = new Slice();
  let count = 0;
  for (const item of items) {
    if (matches(item)) found.push(item);
    if (++count % SCAN_PER_LOOK === 0 && slice.spent) await slice.giveTurn();
  }
  return found;
}

/** What `read` gives, a SearchError becoming the contract's 400. */
export function asBadRequest<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof SearchError) throw new ApiError(400, err.message);
    throw err;
  }
}

/** The filters of the request; 400 for a parameter the list does not take. */
export function listFiltersOf(ctx: Context, kind: ListKind): Filters {
  return asBadRequest(() => readFilters(ctx.query, LIST_FILTERS[kind], LIST_PARAMETERS, `GET ${ctx.path}`));
}

/**
 * A list GET of the current form: without filters the whole list or a page as `sendList`
 * answers it; with them the items matching every filter, in list order, paged the same way.
 */
export async function sendFilteredList<T extends { id: string }>(
  ctx: Context,
  snapshot: Snapshot,
  kind: ListKind,
  items: ReadonlyMap<string, T>,
  present: (item: T) => unknown,
  form = '',
): Promise<void> {
  const filters = listFiltersOf(ctx, kind);
  if (!hasFilters(filters)) return sendList(ctx, snapshot, kind, items, present, form);
  const matches = asBadRequest(() => listMatcher(kind, snapshot.model, filters)) as (item: T) => boolean;
  if (ctx.query.limit !== undefined || ctx.query.cursor !== undefined) {
    const found = await filterInSlices(items.values(), matches);
    return sendList(ctx, snapshot, kind, new Map(found.map((item) => [item.id, item])), present, form);
  }
  await sendFromSnapshot(
    ctx,
    snapshot,
    `list:${kind}${form}?${filtersKey(filters)}`,
    async () => mapped(await filterInSlices(items.values(), matches), present),
    filteredAnswers.of(snapshot),
  );
}
