import type { ExecutionContext } from 'ava';
import { errorContext, type RequestOptions, type TestServer } from './server.js';

export const API = '/api/external';

/**
 * A write that must be acknowledged with `status` and add exactly `commits` commits on top of
 * the previous head (checked with git). Returns the parsed body.
 */
export async function ok(
  t: ExecutionContext,
  s: TestServer,
  method: string,
  path: string,
  body: unknown,
  { status = 200, commits = 1, ...options }: RequestOptions & { status?: number; commits?: 0 | 1 } = {},
): Promise<any> {
  const head = await s.head();
  const count = await s.commitCount();
  const reply = await s.request(method, path, { ...options, body });
  t.is(reply.status, status, `${method} ${path}: ${reply.text}`);
  t.is(await s.commitCount(), count + commits, `${method} ${path}: ${commits} new commit(s)`);
  const newHead = await s.head();
  if (commits === 0) t.is(newHead, head, `${method} ${path}: head unchanged`);
  else t.is((await s.git('rev-parse', `${newHead}^`)).trim(), head, `${method} ${path}: one commit on top of the old head`);
  t.is(reply.headers.get('etag'), `"${newHead}"`, `${method} ${path}: ETag`);
  return reply.body;
}

/**
 * A write that must be refused with `status` and `error`, and `context` (or what matches it) in
 * its `C4store-Error-Context` header (none when not given), leaving refs, history and every list as
 * they were.
 */
export async function no(
  t: ExecutionContext,
  s: TestServer,
  method: string,
  path: string,
  body: unknown,
  status: number,
  error: string | RegExp,
  { context, ...options }: RequestOptions & { context?: string | RegExp } = {},
): Promise<void> {
  const before = await stateOf(s);
  const reply = await s.request(method, path, { ...options, body });
  t.is(reply.status, status, `${method} ${path}: ${reply.text}`);
  t.deepEqual(Object.keys(reply.body ?? {}), ['error'], `${method} ${path}`);
  if (typeof error === 'string') t.is(reply.body?.error, error, `${method} ${path}`);
  else t.regex(reply.body?.error ?? '', error, `${method} ${path}`);
  if (context instanceof RegExp) t.regex(errorContext(reply) ?? '', context, `${method} ${path}: what it concerns`);
  else t.is(errorContext(reply), context, `${method} ${path}: what it concerns`);
  t.is(await stateOf(s), before, `${method} ${path}: a refused write changes nothing`);
}

/** The seed's state plus the current form's lists. */
async function stateOf(s: TestServer): Promise<string> {
  const lists = await Promise.all(['components', 'diagrams'].map((k) => s.get(`${API}/${k}`)));
  return (await s.state()) + JSON.stringify(lists.map((l) => l.body));
}

/** The files the last commit touched, as `git show --name-status` prints them. */
export async function lastCommitFiles(s: TestServer): Promise<string[]> {
  const out = await s.git('show', '--name-status', '--format=', 'main');
  return out
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => line.replace(/\t/g, ' '));
}

export async function lastCommitMessage(s: TestServer): Promise<string> {
  return s.git('log', '-1', '--format=%B', 'main');
}
