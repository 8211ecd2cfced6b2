import type { Middleware } from 'koa';
import { ApiError } from '../../errors.js';
import { SchemaError } from '../../model/check-body.js';
import { GitCommandError } from '../../store/git-cli.js';
import { sendError } from '../respond.js';
import { redactKeys } from './log.js';

/** Our own errors, and Koa's and the router's, in the contract's words. */
export function toApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (err instanceof SchemaError) return new ApiError(400, err.message);
  const status = (err as { status?: unknown })?.status;
  if (status === 405 || status === 501) return new ApiError(405, 'Method not allowed.');
  if (status === 404) return new ApiError(404, 'Not found.');
  if (isDiskFull(err)) return new ApiError(507, DISK_FULL);
  if (isNotWritable(err)) return new ApiError(503, NOT_WRITABLE);
  return undefined;
}

/**
 * No space left (or the quota reached) where the data directory is: no fault of the request, and
 * nothing half done — a commit moves its branch only once every object is written, and the small
 * files are replaced whole — so the client is told to retry, and the operator what to free.
 */
export const DISK_FULL = "The server's disk is full: the request was not carried out. Retry once space is freed.";

function isDiskFull(err: unknown): boolean {
  // git's own commands (a version's tag object) say it in words: they run with LC_ALL=C (git-cli.ts).
  if (err instanceof GitCommandError) return /: (No space left on device|Disk quota exceeded)$/m.test(err.stderr);
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/**
 * The data directory turned read-only (a file system remounted so after a disk error) or lost
 * its permissions under a running server: no fault of the request, nothing half done (as for a
 * full disk), and passing once an operator has put it right.
 */
export const NOT_WRITABLE =
  'The server cannot write its data directory (a read-only file system, or no permission): the request was not carried out. Retry once it is writable again.';

function isNotWritable(err: unknown): boolean {
  if (err instanceof GitCommandError) return /: (Read-only file system|Permission denied)$/m.test(err.stderr);
  const { code, path } = (err ?? {}) as NodeJS.ErrnoException;
  // A file system call's (it names its path): the same codes from elsewhere (a process not started) are faults.
  return path !== undefined && (code === 'EROFS' || code === 'EACCES' || code === 'EPERM');
}

/** `log` takes the request's id (log.ts) beside the line: an unexpected error's line is found from the id a client quotes. */
export function errors(log: (line: string, requestId: string | undefined) => void): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body == null) {
        if (ctx.status === 404) throw new ApiError(404, 'Not found.');
        if (ctx.status === 405 || ctx.status === 501) throw new ApiError(405, 'Method not allowed.');
      }
    } catch (err) {
      const known = toApiError(err);
      const requestId = ctx.state.requestId as string | undefined;
      if (!known) log(redactKeys(`error ${ctx.method} ${ctx.path}: ${(err as Error)?.stack ?? String(err)}`), requestId);
      else if (known.status === 507) log(redactKeys(`disk full: ${ctx.method} ${ctx.path} refused: ${(err as Error).message}`), requestId);
      else if (known.message === NOT_WRITABLE)
        log(redactKeys(`data directory not writable: ${ctx.method} ${ctx.path} refused: ${(err as Error).message}`), requestId);
      sendError(ctx, known ?? new ApiError(500, 'Internal error.'));
    }
  };
}
