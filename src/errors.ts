import { clip } from './drawing/text.js';
/**
 * An error whose message is meant for the API client. Everything else that is thrown
 * becomes `500 Internal error.` and is logged on the server only.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * A request that breaks a model rule: 400 with the rule's text, then, in parentheses, what it
 * concerns where the text alone does not say (`(attribute 'Team', element 0 'Shop API')`).
 */
export class ModelError extends ApiError {
  constructor(
    /** The rule's text, as the contract words it. */
    readonly text: string,
    readonly context: readonly string[] = [],
  ) {
    super(400, context.length === 0 ? text : `${text} (${context.join(', ')})`);
    this.name = 'ModelError';
  }

  /** The same refusal, also naming `what` (after what it names already; once). */
  concerning(what: string): ModelError {
    return this.context.includes(what) ? this : new ModelError(this.text, [...this.context, what]);
  }
}

/** The most characters of a name a refusal quotes to say which element it means. */
const QUOTED_NAME_CHARS = 100;

/**
 * A name as a refusal quotes it (`element 0 'Team'`): on one line, and cut to 100 characters
 * with `…`. It says which element is meant; a client that sent 5,000 characters knows the rest.
 */
export function quotedName(name: string): string {
  return `'${clip(name.replace(/[\p{Cc}\u2028\u2029]+/gu, ' '), QUOTED_NAME_CHARS)}'`;
}

/** Runs `step`; a ModelError it throws also names `what`. */
export function concerning<T>(what: string, step: () => T): T {
  try {
    const result = step();
    if (result instanceof Promise) {
      return result.catch((err: unknown) => {
        throw err instanceof ModelError ? err.concerning(what) : err;
      }) as T;
    }
    return result;
  } catch (err) {
    throw err instanceof ModelError ? err.concerning(what) : err;
  }
}
