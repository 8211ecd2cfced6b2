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
    /**
     * What the refusal concerns where its text alone does not say (`attribute 'Team'`,
     * `element 0 'Shop API'`). Never part of `message`, which is the contract's text exactly
     * (CONTRACT.md §3): the API sends it in the `C4store-Error-Context` header
     * (http/respond.ts sendError), the agents and the command line read it in `detailed`.
     */
    readonly context: readonly string[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /**
   * The message followed by what it concerns, in parentheses (`Required attribute '…' has no
   * value. (attribute 'Team', element 0 'Shop API')`): the form for readers that see text
   * only — an agent's tool answer, the command line, a push's refusal, the viewer's pages.
   * The one place that form is made.
   */
  get detailed(): string {
    return this.context.length === 0 ? this.message : `${this.message} (${this.context.join(', ')})`;
  }
}

/**
 * The response header that carries an API refusal's context (ApiError.context, joined by `, `),
 * percent-encoded (http/respond.ts headerSafe); absent when the refusal has none.
 */
export const ERROR_CONTEXT_HEADER = 'C4store-Error-Context';

/** An error's text in its detailed form where it has one (ApiError.detailed), else its message. */
export function detailedMessage(err: unknown): string {
  return err instanceof ApiError ? err.detailed : String((err as Error)?.message ?? err);
}

/**
 * A request that breaks a model rule: 400 (a merge: 409) with the rule's text exactly, and
 * beside it what it concerns where the text alone does not say (`context`, as
 * `attribute 'Team', element 0 'Shop API'`).
 */
export class ModelError extends ApiError {
  constructor(
    /** The rule's text, as the contract words it. */
    readonly text: string,
    context: readonly string[] = [],
    status = 400,
  ) {
    super(status, text, {}, context);
    this.name = 'ModelError';
  }

  /** The same refusal, also naming `what` (after what it names already; once). */
  concerning(what: string): ModelError {
    return this.context.includes(what) ? this : new ModelError(this.text, [...this.context, what], this.status);
  }

  /** The same refusal answered with `status` (a merge that would break the rule: 409). */
  withStatus(status: number): ModelError {
    return status === this.status ? this : new ModelError(this.text, this.context, status);
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
