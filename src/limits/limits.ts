/**
 * How much one request may ask for, and how large a diagram or an organization may grow
 * (issue 15.2). Each bound is far above any real architecture; each refusal is 413 and names
 * the bound and the `serve` option that raises it. A refused request changes nothing.
 */
import { ApiError } from '../errors.js';

export interface Limits {
  /** Resources in one write, counting each diagram's instances, relations and text areas. */
  writeElements: number;
  diagramInstances: number;
  diagramRelations: number;
  diagramTextareas: number;
  /** Components of one organization (a write that adds beyond it is refused). */
  orgComponents: number;
}

/** The largest request body (413 beyond): also the largest model file a push may bring, since no write could make a larger one. */
export const DEFAULT_BODY_LIMIT = 10 * 1024 * 1024;

/** Why a model file of `bytes` is refused (a push, check, org create --from): by its size alone, unread. */
export function fileTooLarge(bytes: number): string {
  const mb = (n: number) => `${(n / 2 ** 20).toFixed(1)} MB`;
  return `${mb(bytes)}, larger than one write may carry (${mb(DEFAULT_BODY_LIMIT)}).`;
}

/**
 * The longest wait, in whole seconds, a Node timer keeps (2^31 - 1 ms): a longer one fires after
 * 1 ms, so a timeout that long would cancel at once. Every timeout and interval an operator sets is held to it.
 */
export const LONGEST_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

export const DEFAULT_LIMITS: Limits = {
  writeElements: 50_000,
  diagramInstances: 2_000,
  diagramRelations: 8_000,
  diagramTextareas: 1_000,
  orgComponents: 200_000,
};

/** The `c4store serve` option of each limit. */
export const LIMIT_OPTIONS: Record<keyof Limits, string> = {
  writeElements: 'max-write-elements',
  diagramInstances: 'max-diagram-instances',
  diagramRelations: 'max-diagram-relations',
  diagramTextareas: 'max-diagram-textareas',
  orgComponents: 'max-org-components',
};

const number = (n: number): string => n.toLocaleString('en-US');

/**
 * 413 naming what is over which limit, and how to raise it:
 * `Diagram 'Big' has 2,001 component instances; the limit is 2,000 component instances per
 * diagram (raise it with: c4store serve --max-diagram-instances N).`
 */
export function limitExceeded(limit: keyof Limits, limits: Limits, subject: string, count: number, noun: string, per: string): ApiError {
  return new ApiError(
    413,
    `${subject} ${number(count)} ${noun}; the limit is ${number(limits[limit])} ${noun} per ${per} ` +
      `(raise it with: c4store serve --${LIMIT_OPTIONS[limit]} N).`,
  );
}

const NESTED = ['componentInstances', 'relations', 'textareas'] as const;

/**
 * The elements a write body asks for: each resource of a list body, or of each list of a
 * /model body, plus the nested elements of each diagram.
 */
export function countWriteElements(body: unknown): number {
  const countList = (list: unknown[]): number => {
    let n = list.length;
    for (const item of list) {
      if (item === null || typeof item !== 'object') continue;
      for (const key of NESTED) {
        const nested = (item as Record<string, unknown>)[key];
        if (Array.isArray(nested)) n += nested.length;
      }
    }
    return n;
  };
  if (Array.isArray(body)) return countList(body);
  if (body === null || typeof body !== 'object') return 0;
  let n = 0;
  for (const value of Object.values(body)) if (Array.isArray(value)) n += countList(value);
  return n;
}

/** Refuses a write body with more elements than the limit (before any work on it). */
export function checkWriteSize(body: unknown, limits: Limits): void {
  const count = countWriteElements(body);
  if (count > limits.writeElements) throw limitExceeded('writeElements', limits, 'This request has', count, 'elements', 'write');
}

/** Refuses a diagram with more instances, relations or text areas than the limits. */
export function checkDiagramSize(name: string, counts: { instances: number; relations: number; textareas: number }, limits: Limits): void {
  const subject = `Diagram '${name}' has`;
  if (counts.instances > limits.diagramInstances) {
    throw limitExceeded('diagramInstances', limits, subject, counts.instances, 'component instances', 'diagram');
  }
  if (counts.relations > limits.diagramRelations) {
    throw limitExceeded('diagramRelations', limits, subject, counts.relations, 'relations', 'diagram');
  }
  if (counts.textareas > limits.diagramTextareas) {
    throw limitExceeded('diagramTextareas', limits, subject, counts.textareas, 'text areas', 'diagram');
  }
}

/**
 * Refuses a write that leaves the organization with more components than the limit and more
 * than it had (an organization already above a lowered limit can still be edited).
 */
export function checkOrgSize(before: number, after: number, limits: Limits): void {
  if (after > limits.orgComponents && after > before) {
    throw limitExceeded('orgComponents', limits, 'The organization would have', after, 'components', 'organization');
  }
}
