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

/** A request that breaks a model rule: 400 with the rule's text. */
export class ModelError extends ApiError {
  constructor(message: string) {
    super(400, message);
    this.name = 'ModelError';
  }
}
