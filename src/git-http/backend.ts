import { spawn } from 'node:child_process';
import type { IncomingMessage } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Context, Middleware } from 'koa';
import { DEFAULT_LIMITS, type Limits } from '../limits/limits.js';
import { LIMITS_VARIABLE } from '../push/check.js';
import { atomicPushRequest } from './atomic-push.js';
import { reachableWantsOnly } from './unreachable-wants.js';
import { ApiError } from '../errors.js';
import { organizationOf, presentedKey } from '../http/middleware/auth.js';
import type { KeyRates } from '../http/middleware/rate-limit.js';
import type { Orgs } from '../service/orgs.js';
import { DEFAULT_GIT_TIMEOUT_MS, gitAvailable, gitEnvironment, stopProcessGroup } from '../store/git-cli.js';
import type { KeyRecord, KeyStore } from '../store/keys.js';

/**
 * `git clone http://<host>/git/<org>.git`: git's smart HTTP protocol, served by git's own
 * `git http-backend` as a CGI program, the way git hosting servers serve it. c4store only
 * decides who may do what: the organization's API key is the HTTP password (any user name);
 * reader keys fetch, editor keys also push. A push is checked by the repository's pre-receive
 * hook (src/push/), the same code that checks API writes, before `main` moves.
 */

/**
 * Only the smart protocol's three paths: git's dumb HTTP protocol (`info/refs` without
 * `?service=`, `HEAD`, `objects/…`) would have http-backend serve files of the repository
 * directory as they are, and no git since 1.6.6 needs it.
 */
const ROUTE = /^\/git\/([a-z0-9][a-z0-9-]{0,62})\.git\/(info\/refs|git-upload-pack|git-receive-pack)$/;
/** Any other path of an organization's git address: answered in words, not with http-backend's empty 403. */
const GIT_PATH = /^\/git\/([a-z0-9][a-z0-9-]{0,62})\.git\/(.+)$/;
/** The services `?service=` may name: git's fetch and push. */
const SERVICES = new Set(['git-upload-pack', 'git-receive-pack']);
const BASIC = { 'WWW-Authenticate': 'Basic realm="c4store", charset="UTF-8"' };

export interface GitHttpDependencies {
  orgs: Orgs;
  keys: KeyStore;
  log: (line: string) => void;
  /** Bytes one fetch or push request may send (git's pack data); beyond, the request is cut off. */
  gitBodyLimit?: number;
  /** How long one request's git may run, the hook of a push included (default DEFAULT_GIT_TIMEOUT_MS); then it is stopped. */
  gitTimeoutMs?: number;
  /** The server's size limits: a push is held to them as an API write is (push/check.ts). */
  limits?: Limits;
  /** The key's rates, counted with its API requests: a fetch reads, a push writes. */
  rates?: KeyRates;
}

/** The Content-Encoding names http-backend unpacks (git's client sends gzip). */
const GZIP = /^(x-)?gzip$/i;

/** A push of a model larger than this is no architecture model (the API's own bodies stop at 10 MB). */
export const DEFAULT_GIT_BODY_LIMIT = 256 * 1024 * 1024;

/**
 * The key of a git request: HTTP Basic's password (what git sends), or the API's own key
 * headers read as the API reads them, refused with the Basic challenge git answers to.
 */
function gitKey(ctx: Context): string {
  const basic = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(ctx.get('authorization'));
  if (basic) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new ApiError(401, 'Invalid API key.', BASIC);
    return decoded.slice(colon + 1);
  }
  try {
    return presentedKey(ctx);
  } catch (err) {
    if (err instanceof ApiError) throw new ApiError(err.status, err.message, BASIC);
    throw err;
  }
}

function wantsPush(ctx: Context, service: string): boolean {
  // `?service=` given twice is an array here, and http-backend serves the receive-pack of either.
  return service === 'git-receive-pack' || (service === 'info/refs' && [ctx.query.service].flat().includes('git-receive-pack'));
}

export function gitHttp(deps: GitHttpDependencies): Middleware {
  return async (ctx, next) => {
    if (!ctx.path.startsWith('/git/')) return next();
    try {
      await serveGit(ctx, deps);
    } catch (err) {
      // git shows an error answer's text (as `remote: …`) only when it is text/plain; the JSON
      // of the API's errors reached a person as "The requested URL returned error: 403".
      if (!(err instanceof ApiError) || !/^git\//.test(ctx.get('user-agent'))) throw err;
      for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
      ctx.status = err.status;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = `${err.detailed}\n`;
    }
  };
}

async function serveGit(ctx: Context, deps: GitHttpDependencies): Promise<void> {
  const match = ROUTE.exec(ctx.path);
  if (!match) throw notServed(ctx.path);
  const [, slug, service] = match;
  // Said before the key is looked at, the same for every organization, existing or not.
  if (service === 'info/refs') {
    const named = [ctx.query.service].flat();
    if (named.length === 0 || named[0] === undefined) throw notServed(ctx.path);
    const other = named.find((name) => !SERVICES.has(name ?? ''));
    if (other !== undefined) throw notServed(ctx.path, other);
  }
  const post = service === 'git-upload-pack' || service === 'git-receive-pack';
  if (ctx.method !== (post ? 'POST' : 'GET') && !(ctx.method === 'HEAD' && !post)) {
    ctx.set('Allow', post ? 'POST' : 'GET, HEAD');
    throw new ApiError(405, 'Method not allowed.');
  }
  const record = await deps.keys.verify(gitKey(ctx));
  const org = organizationOf(record, deps.orgs);
  // Another organization's key learns nothing about this one, not even that it exists.
  if (!record || !org || record.org !== slug) throw new ApiError(401, 'Invalid API key.', BASIC);
  if (wantsPush(ctx, service) && record.role !== 'editor') throw new ApiError(403, 'This API key may only read.');
  // Every request of git counts: a fetch's reads, a push's writes.
  deps.rates?.take(record.id, !wantsPush(ctx, service), BASIC);
  if (!(await gitAvailable())) {
    throw new ApiError(501, "Cloning over HTTP needs git's command line (git http-backend), which this machine does not have.");
  }
  ctx.state.org = org;
  const declared = Number(ctx.get('content-length') || 0);
  const limit = deps.gitBodyLimit ?? DEFAULT_GIT_BODY_LIMIT;
  if (declared > limit) throw new ApiError(413, 'Request body too large.');
  await runBackend(ctx, resolve(dirname(deps.orgs.gitdir(slug))), slug, service, record, deps, limit);
}

/** The words of a git path or service that is not served: what to use instead. */
function notServed(path: string, service?: string): ApiError {
  const git = GIT_PATH.exec(path);
  if (!git) return new ApiError(404, 'Not found.');
  const address = `…/git/${git[1]}.git`;
  if (service === 'git-upload-archive' || (service === undefined && git[2] === 'git-upload-archive')) {
    return new ApiError(
      404,
      `git archive --remote is not served here: clone the repository (git clone ${address}) and run git archive in the clone, or read the model through the API's exports (GET /api/external/model with Accept: text/vnd.structurizr.dsl, text/x-plantuml, text/vnd.mermaid or text/vnd.likec4).`,
    );
  }
  if (service !== undefined) {
    return new ApiError(
      404,
      `git's service '${service.slice(0, 100)}' is not served here: git-upload-pack (clone, fetch) and git-receive-pack (push) are.`,
    );
  }
  return new ApiError(
    404,
    `Only git's smart HTTP protocol is served here (git clone ${address}): git's dumb HTTP paths (info/refs without ?service=, HEAD, objects/…) are not.`,
  );
}

/**
 * A gzip body, unpacked as it is read, once its first bytes have come out: a body that is no gzip
 * is refused before git answers anything (its answer starts with a 200).
 */
function unpacked(request: IncomingMessage): Promise<Readable> {
  const body = request.pipe(createGunzip());
  return new Promise((resolve, reject) => {
    const refuse = (err: Error) => {
      request.unpipe(body);
      body.destroy();
      request.off('close', gone);
      reject(new ApiError(400, `Request body is not the gzip its Content-Encoding says: ${err.message}.`));
    };
    // A client gone before its gzip said anything: gunzip would wait for the rest forever.
    const gone = () => {
      if (!request.complete) refuse(new Error('the request ended before its body did'));
    };
    body.once('error', refuse);
    request.once('close', gone);
    body.once('readable', () => {
      body.off('error', refuse);
      request.off('close', gone);
      resolve(body);
    });
  });
}

/** Runs `git http-backend` for one request: the request body in, its CGI answer out. */
async function runBackend(
  ctx: Context,
  projectRoot: string,
  slug: string,
  service: string,
  key: KeyRecord,
  { log, limits = DEFAULT_LIMITS, gitTimeoutMs = DEFAULT_GIT_TIMEOUT_MS }: GitHttpDependencies,
  limit: number,
): Promise<void> {
  const env: NodeJS.ProcessEnv = {
    ...gitEnvironment(),
    GIT_PROJECT_ROOT: projectRoot,
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: `/${slug}.git/${service}`,
    REQUEST_METHOD: ctx.method,
    QUERY_STRING: ctx.querystring,
    CONTENT_TYPE: ctx.get('content-type'),
    REMOTE_ADDR: ctx.ip,
    // http-backend enables receive-pack only for an authenticated user.
    REMOTE_USER: key.label,
    GIT_PROTOCOL: ctx.get('git-protocol'),
    // Read by the pre-receive hook that receive-pack runs.
    [LIMITS_VARIABLE]: JSON.stringify(limits),
    // Partial clones (`git clone --filter=blob:none`): a large organization's history without
    // every old version of every file, each fetched when a checkout needs it. That fetch asks for
    // objects by id, which protocol v0 (older clients, `protocol.version=0`) allows only with
    // allowReachableSHA1InWant: it refuses a commit no ref reaches, and looks at nothing else (a
    // blob or tree by id is served). Protocol v2 (git's default since 2.26) would take any object
    // the repository holds whatever these settings say ("wants can be anything",
    // gitprotocol-v2): its commits are checked here as v0 checks them (unreachable-wants.ts).
    GIT_CONFIG_COUNT: '3',
    GIT_CONFIG_KEY_0: 'uploadpack.allowFilter',
    GIT_CONFIG_VALUE_0: 'true',
    GIT_CONFIG_KEY_1: 'uploadpack.allowReachableSHA1InWant',
    GIT_CONFIG_VALUE_1: 'true',
    // `git push -o ci.skip`, as pushers to GitHub and GitLab use it: without the capability git's
    // client refuses to push at all. The options mean nothing here; the hook says they were ignored.
    GIT_CONFIG_KEY_2: 'receive.advertisePushOptions',
    GIT_CONFIG_VALUE_2: 'true',
  };
  // A compressed request is unpacked here, so that what git is given is held to the limit: left to
  // http-backend, 70 kB of gzip unpacked into a 70 MB pack in receive-pack's quarantine (256 MB of
  // it, into hundreds of gigabytes), and 3 MB of a fetch's gzip into 20 million `have` lines,
  // which kept upload-pack busy for most of a minute (256 MB of it, for the whole git timeout).
  // git's client compresses its fetches' requests over a kilobyte.
  const push = service === 'git-receive-pack';
  const unpackedHere = ctx.method === 'POST' && GZIP.test(ctx.get('content-encoding').trim());
  if (!unpackedHere) env.HTTP_CONTENT_ENCODING = ctx.get('content-encoding');
  // A push's body grows by the capability atomicPushRequest asks for, and one unpacked here is not
  // as long as it was sent: git reads either to its end.
  if (!push && !unpackedHere && ctx.get('content-length') !== '') env.CONTENT_LENGTH = ctx.get('content-length');
  const body = unpackedHere ? await unpacked(ctx.req) : ctx.req;
  // A v2 fetch by id of a commit no ref reaches is refused, as v0's upload-pack refuses it.
  const v2Fetch = service === 'git-upload-pack' && ctx.method === 'POST' && /(^|:)version=2(:|$)/.test(ctx.get('git-protocol'));
  let refused: string | undefined;
  // A group of its own, stopped whole (with the pre-receive hook it runs) if it outlives the
  // timeout every git process of the server has.
  const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  const timer = setTimeout(() => {
    log(`git http-backend ${slug} ${service}: still running after ${gitTimeoutMs / 1000} s, stopped`);
    stopProcessGroup(child);
  }, gitTimeoutMs);
  timer.unref();
  child.once('close', () => clearTimeout(timer));
  ctx.respond = false;
  const res = ctx.res;
  return new Promise((resolve) => {
    let head = Buffer.alloc(0);
    let headersDone = false;
    const stderr: Buffer[] = [];
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.stdout.on('data', (chunk: Buffer) => {
      if (refused !== undefined) return;
      if (headersDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n') >= 0 ? head.indexOf('\r\n\r\n') : head.indexOf('\n\n');
      if (end < 0) return;
      const separator = head[end] === 13 ? 4 : 2;
      let status = 200;
      for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
        const colon = line.indexOf(':');
        if (colon < 0) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
        else res.setHeader(name, value);
      }
      res.statusCode = status;
      headersDone = true;
      res.write(head.subarray(end + separator));
    });
    child.on('close', (code) => {
      if (refused !== undefined) {
        // What upload-pack answers in v0, and git shows: `remote error: upload-pack: not our ref <id>`.
        if (!res.headersSent) {
          res.statusCode = 200;
          res.setHeader('Content-Type', 'application/x-git-upload-pack-result');
        }
        const line = `ERR upload-pack: not our ref ${refused}\n`;
        res.end(`${(line.length + 4).toString(16).padStart(4, '0')}${line}`);
        resolve();
        return;
      }
      if (!headersDone) {
        const body = JSON.stringify({ error: 'Internal error.' });
        if (!res.headersSent)
          res.writeHead(500, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
        res.end(body);
      } else if (code === null) {
        // Stopped (the timeout, the body limit, the server's shutdown): an answer ended as if
        // complete left the pusher's git, which had read receive-pack's keepalives, waiting
        // forever for the report; a cut connection is an error it reports.
        res.destroy();
      } else {
        res.end();
      }
      // A refused push is git's answer to the client, not a fault of ours; anything else is logged.
      if (code !== 0)
        log(`git http-backend ${slug} ${service} exited ${code}: ${Buffer.concat(stderr).toString('utf8').trim().slice(0, 500)}`);
      resolve();
    });
    child.on('error', () => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
      resolve();
    });
    child.stdin.on('error', () => {});
    if (ctx.method === 'POST') {
      // Counted as it arrives (git sends pushes chunked): past the limit, git gets no more and
      // the connection is closed; a receive-pack cut short moves no ref.
      body.on('error', (err) => {
        log(`git ${slug} ${service}: request body is no gzip (${err.message}), stopped`);
        stopProcessGroup(child);
      });
      let received = 0;
      body.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > limit) {
          log(`git ${slug} ${service}: request body over ${limit} bytes, cut off`);
          child.kill();
          body.destroy();
          ctx.req.destroy();
        }
      });
      const checked = v2Fetch
        ? body.pipe(
            reachableWantsOnly(join(projectRoot, `${slug}.git`), (oid) => {
              refused = oid;
              log(`git ${slug} ${service}: a fetch of ${oid}, which no ref reaches, refused`);
              stopProcessGroup(child);
            }),
          )
        : body;
      (push ? body.pipe(atomicPushRequest()) : checked).pipe(child.stdin);
    } else {
      child.stdin.end();
    }
    ctx.req.on('aborted', () => stopProcessGroup(child));
  });
}
