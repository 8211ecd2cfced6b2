import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ApiError } from '../errors.js';
import { state } from '../http/resource.js';
import type { KeyRates } from '../http/middleware/rate-limit.js';
import { type SendBounds, tooManyUnreadBytes } from '../http/middleware/send-bounds.js';
import type { KeyRecord } from '../store/keys.js';
import type { Tool } from './tools.js';

/**
 * `/mcp`: the Model Context Protocol over streamable HTTP (CONTRACT.md §10), served by the
 * official SDK's transport, behind the same key check, rates, body bounds and connection caps
 * as the API (the router's middleware, given by http/app.ts).
 *
 * A session is made by `initialize` and lives in this process: it keeps the client's name (the
 * SDK's 1.x clients send it only then) for the `Agent:` trailer of its commits. A request naming
 * a session this process does not know (another instance, a restart) is answered 404, on which
 * the protocol has clients start a new session. A session belongs to the key that made it.
 *
 * A JSON-RPC batch (a JSON array of messages in one POST) is served only to a session whose
 * protocol version has batches: 2025-03-26 added them, 2025-06-18 removed them ("the body of the
 * POST request MUST be a single JSON-RPC request, notification, or response"). The SDK's
 * transport takes a batch whatever the version, so the refusal is made here, before it.
 */

export interface McpSettings {
  publicUrl: string;
  tools: readonly Tool[];
  /** Sessions kept at once; the one idle longest, of the key holding the most, is closed to make room. */
  maxSessions?: number;
  /** Sessions one key keeps at once; its own idle longest is closed to make room. */
  maxSessionsPerKey?: number;
  /** A session unused this long is closed (ms). */
  idleMs?: number;
  /** The most requests a batch runs, and characters of JSON its answers take (MAX_BATCH_REQUESTS, MAX_BATCH_ANSWER_CHARS). */
  batch?: { requests: number; answerChars: number };
  /**
   * The API's bound on a key's answers its clients have not taken, and its send timeout: the
   * router's middleware applies them to answers in `ctx.body` only, and the transport writes its
   * own.
   */
  sendBounds?: SendBounds;
  /** The key's rates, which the router's middleware counts a POST against as one request. */
  rates?: KeyRates;
  /** An unexpected error of a handler, for the server's log (level error), with the id of the request that met it. */
  logError(requestId: string, line: string): void;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  keyId: string;
  lastUsed: number;
  /** The protocol version its `initialize` settled on: whether a batch is served. */
  protocolVersion: string;
  /** Its requests in progress, by id: those of the POSTs the transport has not yet answered (handle). */
  requests: Map<RequestId, InProgress>;
  /** Ends the session: its transport is closed once no request of it is in progress (newSession). */
  end(): void;
  /** Closes the transport if the session was ended while requests were in progress and none is left. */
  closeIfEnded(): void;
}

type RequestId = string | number;

/** A POST in progress: whether it is a batch, and the characters of JSON its answers have taken so far. */
interface Post {
  batch: boolean;
  chars: number;
}

/**
 * The most requests a batch runs: those after are answered a refusal, not run. The SDK's transport
 * holds every answer of a POST until the last is in, and a hundred `get_model` pages or PNG
 * renders in one POST were all built and held at once.
 */
const MAX_BATCH_REQUESTS = 50;
/**
 * The most characters of JSON a batch's answers take: an answer that would pass it is replaced by
 * a short error (its request ran), so that no more than this and one answer (at most 60,000
 * characters, a PNG's 2 MB) is held for one POST. The first answer ready is always given.
 */
const MAX_BATCH_ANSWER_CHARS = 2_000_000;
/** JSON-RPC's range for the server's own errors: an answer withheld for the batch's bound. */
const ANSWER_WITHHELD = -32000;

interface InProgress {
  /** The POST that carries it: its id is free again once that POST is answered, not before. */
  post: Post;
  /** Past a batch's MAX_BATCH_REQUESTS: not run, answered this refusal instead. */
  refused?: string;
  /** Handed to the SDK's server (it runs). */
  delivered: boolean;
  /** Its response is given to the transport. */
  answered: boolean;
  /** The client cancelled it, and was answered so: the SDK's own response, should it come, is dropped. */
  cancelled: boolean;
}

/**
 * The answer the transport has written (and ended) as the API's are bounded (send-bounds.ts): what
 * the kernel has not yet taken counts against the key until it has, and an answer not taken within
 * the send timeout is cut off, its connection closed. A client that stops reading would otherwise
 * hold its answers in memory for as long as it keeps the connection, a batch's up to 4 MB a POST (its bound, and one answer past it).
 */
function holdUntilTaken(ctx: Context, keyId: string, bounds: SendBounds, unread: Map<string, number>): void {
  const { res } = ctx;
  const bytes = res.writableLength;
  if (res.writableFinished || res.destroyed || bytes === 0) return;
  unread.set(keyId, (unread.get(keyId) ?? 0) + bytes);
  const timer = setTimeout(() => ctx.req.socket.destroy(), bounds.timeoutMs);
  res.once('close', () => {
    clearTimeout(timer);
    const left = (unread.get(keyId) ?? 0) - bytes;
    if (left > 0) unread.set(keyId, left);
    else unread.delete(keyId);
  });
}

/** The SDK's side, loaded with the first session (loadProtocol). */
let protocol: Promise<typeof import('./protocol.js')> | undefined;

const SESSION_HEADER = 'mcp-session-id';
const DEFAULT_MAX_SESSIONS = 1000;
/** A tenth of the whole: one key (a reader's, another organization's) cannot push every other agent out. */
const DEFAULT_MAX_SESSIONS_PER_KEY = 100;
const DEFAULT_IDLE_MS = 30 * 60 * 1000;
/**
 * The HTTP request that carries a call, handed to the tool handlers through the SDK's
 * `authInfo` (the transport passes `req.auth` on to every handler of that request).
 */
function carry(ctx: Context): void {
  const { key } = state(ctx);
  (ctx.req as typeof ctx.req & { auth: AuthInfo }).auth = { token: '', clientId: key.id, scopes: [key.role], extra: { ctx } };
}

/** `middleware`: the key check, rates and send bounds; `parse`: the body reader, for POST. */
export function mcpRouter(middleware: Middleware[], parse: Middleware, settings: McpSettings): Router {
  const sessions = new Map<string, Session>();
  /** Bytes of each key's answers written but not yet handed to the kernel: clients that do not read them (sendBounds). */
  const unread = new Map<string, number>();
  const router = new Router({ sensitive: true });
  const maxSessions = settings.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const idleMs = settings.idleMs ?? DEFAULT_IDLE_MS;
  const maxBatchRequests = settings.batch?.requests ?? MAX_BATCH_REQUESTS;
  const maxBatchAnswerChars = settings.batch?.answerChars ?? MAX_BATCH_ANSWER_CHARS;

  const closeSession = (id: string) => {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    session.end();
  };
  const maxPerKey = settings.maxSessionsPerKey ?? DEFAULT_MAX_SESSIONS_PER_KEY;
  const closeIdlest = (keyId: string) => {
    let idlest: [string, Session] | undefined;
    for (const entry of sessions) if (entry[1].keyId === keyId && (!idlest || entry[1].lastUsed < idlest[1].lastUsed)) idlest = entry;
    if (idlest) closeSession(idlest[0]);
  };
  /** Room for one more session of `keyId`: idle sessions go, then that key's own beyond its share, then the busiest key's. */
  const sweep = (keyId: string) => {
    const now = Date.now();
    for (const [id, session] of sessions) if (now - session.lastUsed > idleMs) closeSession(id);
    const countOf = () => {
      const counts = new Map<string, number>();
      for (const session of sessions.values()) counts.set(session.keyId, (counts.get(session.keyId) ?? 0) + 1);
      return counts;
    };
    while ((countOf().get(keyId) ?? 0) >= maxPerKey) closeIdlest(keyId);
    while (sessions.size >= maxSessions) {
      const [busiest] = [...countOf()].sort((a, b) => b[1] - a[1])[0]!;
      closeIdlest(busiest);
    }
  };

  const newSession = async (key: KeyRecord, protocolVersion: string): Promise<Session> => {
    const { openSession, initializeProblem } = await loadProtocol();
    const { server, transport } = openSession(settings, key.role, {
      // Room is made once the transport has taken the initialize: one it refuses (406, 415) closes no other session.
      initialized: (id) => {
        sweep(key.id);
        sessions.set(id, session);
      },
      closed: (id) => sessions.delete(id),
    });
    const requests = new Map<RequestId, InProgress>();
    // A session ended (DELETE, idle, or room made for another) while requests are in progress is
    // closed once they are answered: the transport, closed, would answer them never, and their
    // POSTs would not end. It takes no new request meanwhile (it is no longer among `sessions`).
    let ended = false;
    const closeIfEnded = () => {
      if (ended && requests.size === 0) void server.close().catch(() => {});
    };
    const end = () => {
      ended = true;
      closeIfEnded();
    };
    const session: Session = { transport, server, keyId: key.id, lastUsed: Date.now(), protocolVersion, requests, end, closeIfEnded };
    await server.connect(transport);
    const reply = (message: unknown) => void transport.send(message as JSONRPCMessage).catch(() => {});
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      // Each message of a batch is checked as a message alone is (handle): the SDK would answer a
      // member's params it cannot take as an internal error (-32603) carrying its schema library's dump.
      const invalid = invalidParams(message) ?? initializeRefused(message, initializeProblem);
      if (invalid !== undefined) return reply(jsonRpcError(invalid.id, INVALID_PARAMS, invalid.message));
      const { id, method } = message as { id?: unknown; method?: unknown };
      const request = typeof method === 'string' && id !== undefined ? requests.get(id as RequestId) : undefined;
      if (request?.refused !== undefined) return reply(jsonRpcError(id, INVALID_REQUEST, request.refused));
      if (request) request.delivered = true;
      deliver?.(withoutTask(message), extra);
      const cancelled = cancelledIn(message);
      const running = cancelled === undefined ? undefined : requests.get(cancelled);
      if (cancelled !== undefined && running?.delivered && !running.answered) {
        // The SDK stops the request and sends nothing for it, as the protocol has a cancelled request
        // go unanswered: but a POST with JSON answers ends only once each of its requests has one.
        running.cancelled = true;
        reply(
          jsonRpcError(
            cancelled,
            REQUEST_CANCELLED,
            `Request cancelled: the client cancelled request ${JSON.stringify(cancelled)} (notifications/cancelled); what it had begun may still have been done.`,
          ),
        );
      }
    };
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const { id, method } = message as { id?: unknown; method?: unknown };
      const request = method === undefined && id !== undefined ? requests.get(id as RequestId) : undefined;
      // Cancelled and answered so: the SDK's own answer, had it passed its check before the cancellation, is dropped.
      if (request?.cancelled && request.answered) return Promise.resolve();
      if (request) request.answered = true;
      if (request?.post.batch) {
        // Held by the transport until the batch's last answer is in: within the batch's bound.
        let chars = JSON.stringify(message).length;
        // The first answer ready is given whatever its size (a PNG's 2 MB): within what one POST of it would carry.
        if (request.post.chars > 0 && request.post.chars + chars > maxBatchAnswerChars) {
          message = jsonRpcError(
            id,
            ANSWER_WITHHELD,
            `Answer withheld: this batch's answers reached ${maxBatchAnswerChars.toLocaleString('en')} characters, the most one POST carries. The request ran; send it in a POST of its own for its answer.`,
          ) as JSONRPCMessage;
          chars = JSON.stringify(message).length;
        }
        request.post.chars += chars;
      }
      return send(message, options);
    };
    return session;
  };

  const handle = async (ctx: Context) => {
    checkOrigin(ctx, settings.publicUrl);
    if (ctx.method === 'POST' && (await notMessages(ctx.request.body))) return refuseNotMessages(ctx);
    const invalid = ctx.method === 'POST' ? invalidParams(ctx.request.body) : undefined;
    if (invalid !== undefined) {
      // The SDK checks params only with its schemas, and answers a mismatch as an internal error
      // (-32603) carrying the schema library's dump, or an initialize's as "Server not initialized":
      // the protocol's answer is -32602, said plainly. A batch's members are checked alike (newSession).
      ctx.body = jsonRpcError(invalid.id, INVALID_PARAMS, invalid.message);
      return;
    }
    const { key } = state(ctx);
    const id = ctx.get(SESSION_HEADER);
    let session: Session | undefined;
    if (id === '') {
      const initialize = ctx.method === 'POST' ? initializeIn(ctx.request.body) : undefined;
      if (initialize === undefined) {
        throw new ApiError(400, 'Start with an initialize request: this request names no Mcp-Session-Id.');
      }
      const { negotiatedVersion, initializeProblem } = await loadProtocol();
      const version = negotiatedVersion(initialize);
      // `[initialize]` under a version without batches opens no session.
      if (Array.isArray(ctx.request.body) && !hasBatches(version)) return refuseBatch(ctx, version);
      // Beyond the fields invalidParams names: what the SDK's schema takes, said as they are.
      const refused = initializeRefused(initialize, initializeProblem);
      if (refused !== undefined) {
        ctx.body = jsonRpcError(refused.id, INVALID_PARAMS, refused.message);
        return;
      }
      session = await newSession(key, version);
    } else {
      session = sessions.get(id);
      // Idle too long, it is closed now: the sweep that closes idle sessions runs only when one is opened.
      if (session && Date.now() - session.lastUsed > idleMs) {
        closeSession(id);
        session = undefined;
      }
      // Another key cannot use a session it did not make; it learns nothing of it either.
      if (!session || session.keyId !== key.id) throw new ApiError(404, 'Session not found: initialize a new one.');
    }
    session.lastUsed = Date.now();
    if (ctx.method === 'DELETE') {
      // Not the transport's own DELETE, which closes it at once: its requests in progress would never be answered.
      closeSession(id);
      ctx.body = null;
      ctx.status = 200;
      return;
    }
    if (ctx.method === 'POST' && Array.isArray(ctx.request.body) && !hasBatches(session.protocolVersion)) {
      return refuseBatch(ctx, session.protocolVersion);
    }
    // The rates counted the POST as one request: a batch's other messages count too (a write each,
    // as every POST does), or a hundred calls would pass for one.
    if (ctx.method === 'POST' && Array.isArray(ctx.request.body)) {
      for (let i = 1; i < ctx.request.body.length; i++) settings.rates?.take(key.id, false);
    }
    // The transport matches answers to POSTs by request id: a second request of an id in progress
    // would take the first one's answer, and leave its POST unanswered for ever.
    const ids = ctx.method === 'POST' ? requestIdsIn(ctx.request.body) : [];
    const taken = ids.find((requestId, i) => ids.indexOf(requestId) !== i || session.requests.has(requestId));
    if (taken !== undefined) return refuseIdInUse(ctx, taken);
    const bounds = settings.sendBounds;
    if (bounds && ctx.method === 'POST' && (unread.get(key.id) ?? 0) >= bounds.bytesPerKey) {
      throw tooManyUnreadBytes();
    }
    const post: Post = { batch: Array.isArray(ctx.request.body), chars: 0 };
    const refused =
      ids.length > maxBatchRequests
        ? `Invalid Request: a batch runs at most ${maxBatchRequests} requests, and this one holds ${ids.length}: those after the ${maxBatchRequests}th, this one among them, were not run. Send them in another POST.`
        : undefined;
    for (const [i, requestId] of ids.entries()) {
      session.requests.set(requestId, {
        post,
        ...(i >= maxBatchRequests ? { refused } : {}),
        delivered: false,
        answered: false,
        cancelled: false,
      });
    }
    carry(ctx);
    ctx.respond = false;
    try {
      await session.transport.handleRequest(ctx.req, ctx.res, ctx.method === 'POST' ? ctx.request.body : undefined);
      if (bounds) holdUntilTaken(ctx, key.id, bounds, unread);
    } finally {
      for (const requestId of ids) if (session.requests.get(requestId)?.post === post) session.requests.delete(requestId);
      session.closeIfEnded();
    }
  };

  router.post('/mcp', ...middleware, onlyJson, refusedAsJsonRpc(parse), handle);
  router.get('/mcp', ...middleware, async (ctx) => {
    // No server-initiated stream: every answer comes with its request (JSON answers).
    ctx.set('Allow', 'POST, DELETE');
    throw new ApiError(405, 'Method not allowed.');
  });
  router.delete('/mcp', ...middleware, handle);
  return router;
}

/** The SDK's side, loaded with the first session (protocol.ts says why). */
function loadProtocol(): Promise<typeof import('./protocol.js')> {
  protocol ??= import('./protocol.js');
  return protocol;
}

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;
const INITIALIZE_TAKES =
  'Invalid params: initialize takes {"protocolVersion": <a version, such as "2025-06-18">, "capabilities": {…}, "clientInfo": {"name": <the client\'s name>, "version": <its version>}}.';
/** What an initialize's params may take (JSON characters): clients send a few hundred. */
const MAX_INITIALIZE_CHARS = 65_536;
/** JSON-RPC leaves it open; the Language Server Protocol's RequestCancelled, which clients know. */
const REQUEST_CANCELLED = -32800;

/** The ids of the requests (not notifications, not responses) of a body that holds messages. */
function requestIdsIn(body: unknown): RequestId[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.filter((m) => isObject(m) && typeof m.method === 'string' && m.id !== undefined).map((m) => m.id as RequestId);
}

/** The request a `notifications/cancelled` message names, if it is one. */
function cancelledIn(message: unknown): RequestId | undefined {
  if (!isObject(message) || message.method !== 'notifications/cancelled' || message.id !== undefined) return undefined;
  const requestId = isObject(message.params) ? message.params.requestId : undefined;
  return typeof requestId === 'string' || typeof requestId === 'number' ? requestId : undefined;
}

/**
 * A POST naming a request id that is in progress in its session (in another POST, or twice in a
 * batch): 400 with JSON-RPC's -32600 and no id, which would name the request in progress; none of
 * its messages run.
 */
function refuseIdInUse(ctx: Context, id: RequestId): void {
  ctx.status = 400;
  ctx.body = jsonRpcError(
    null,
    INVALID_REQUEST,
    `Invalid Request: id ${JSON.stringify(id)} is that of a request still in progress in this session: give each request an id of its own.`,
  );
}

/** Whether MCP `version` has JSON-RPC batches: from 2025-06-18 on it has none (versions are dates). */
function hasBatches(version: string): boolean {
  return version < '2025-06-18';
}

/**
 * The body reader, whose refusal of a body that is no JSON it takes (malformed, a key given twice,
 * a number that would be read as another) is answered as the Streamable HTTP transport answers
 * one: 400 with JSON-RPC's -32700 Parse error, the words of the API's refusal in its message, so
 * that an agent's client reads it as the protocol's. Refusals of size or type stay the API's.
 */
function refusedAsJsonRpc(parse: Middleware): Middleware {
  return async (ctx, next) => {
    let parsed = false;
    try {
      await parse(ctx, () => {
        parsed = true;
        return next();
      });
    } catch (error) {
      if (parsed || !(error instanceof ApiError) || error.status !== 400) throw error;
      ctx.status = 400;
      ctx.body = jsonRpcError(null, PARSE_ERROR, `Parse error: ${error.message}`);
    }
  };
}

/**
 * A body of another type than JSON is the API's 415, before it is read: the body reader takes YAML
 * (and `+json` types) for the API, which the Streamable HTTP transport would refuse only once it
 * was read, with its own error (-32000).
 */
const onlyJson: Middleware = async (ctx, next) => {
  // Media types are case-insensitive (RFC 9110 §8.3.1), as the body reader reads them.
  if (ctx.request.type.trim().toLowerCase() !== 'application/json') {
    throw new ApiError(415, `Unsupported Content-Type: ${ctx.request.type.trim() || '(none)'}.`);
  }
  await next();
};

/**
 * A batch under a version without batches: the Streamable HTTP transport's answer to a body it
 * cannot accept, 400 with a JSON-RPC error that has no id (the batch's messages go unanswered).
 */
function refuseBatch(ctx: Context, version: string): void {
  ctx.status = 400;
  ctx.body = jsonRpcError(
    null,
    INVALID_REQUEST,
    `Invalid Request: MCP ${version} has no batches (a JSON array of messages in one POST): send each message in a POST of its own.`,
  );
}

/**
 * Whether a body that parsed as JSON is no JSON-RPC message (nor a batch of them; an empty batch
 * is none): JSON-RPC's -32600 Invalid Request, where the SDK's transport answers -32700 Parse
 * error, which JSON-RPC keeps for a body that is no JSON at all.
 */
async function notMessages(body: unknown): Promise<boolean> {
  const { isMessage } = await loadProtocol();
  const messages = Array.isArray(body) ? body : [body];
  return messages.length === 0 || !messages.every(isMessage);
}

/** The refusal of notMessages, with the message's id when it has one the protocol takes. */
function refuseNotMessages(ctx: Context): void {
  const id = isObject(ctx.request.body) ? ctx.request.body.id : undefined;
  ctx.status = 400;
  ctx.body = jsonRpcError(
    typeof id === 'string' || Number.isInteger(id) ? id : null,
    INVALID_REQUEST,
    'Invalid Request: not a JSON-RPC 2.0 message: a request is {"jsonrpc": "2.0", "id": <a string or an integer>, "method": <its name>, "params": <an object, if any>}; a notification has no "id".',
  );
}

/** A JSON-RPC error response; `id` null when the request's id could not be read (a body that does not parse, a batch). */
function jsonRpcError(id: unknown, code: number, message: string) {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A request (one message, alone or a batch's member) whose params the methods we serve cannot take, and why. */
function invalidParams(body: unknown): { id: unknown; message: string } | undefined {
  if (!isObject(body) || body.id === undefined) return undefined;
  const { id, method, params } = body;
  if (method === 'initialize') {
    const client = isObject(params) ? params.clientInfo : undefined;
    const valid =
      isObject(params) &&
      typeof params.protocolVersion === 'string' &&
      isObject(params.capabilities) &&
      isObject(client) &&
      typeof client.name === 'string' &&
      typeof client.version === 'string';
    if (!valid) {
      return {
        id,
        message: INITIALIZE_TAKES,
      };
    }
    // The SDK's server keeps the client's capabilities and clientInfo as long as the session: a
    // 10 MB initialize, a hundred sessions a key, would hold a gigabyte for each key.
    const size = JSON.stringify(params).length;
    if (size > MAX_INITIALIZE_CHARS) {
      return {
        id,
        message: `Invalid params: initialize's params are ${size.toLocaleString('en')} characters of JSON, and at most ${MAX_INITIALIZE_CHARS.toLocaleString('en')} are taken: they are kept as long as the session.`,
      };
    }
  }
  if (method === 'tools/call') {
    if (!isObject(params)) return { id, message: 'Invalid params: tools/call takes {"name": <tool>, "arguments": {…}}.' };
    if (typeof params.name !== 'string') return { id, message: "Invalid params: tools/call needs name, the tool's name." };
    if (params.arguments !== undefined && !isObject(params.arguments)) {
      return { id, message: 'Invalid params: the arguments of tools/call are an object of named values.' };
    }
  }
  if (method === 'resources/read' && !(isObject(params) && typeof params.uri === 'string')) {
    return { id, message: 'Invalid params: resources/read takes {"uri": <resource>}.' };
  }
  if ((method === 'tools/list' || method === 'resources/list' || method === 'resources/templates/list') && params !== undefined) {
    if (!isObject(params) || (params.cursor !== undefined && typeof params.cursor !== 'string')) {
      return { id, message: `Invalid params: ${method} takes {"cursor": <the nextCursor of its previous answer>} or nothing.` };
    }
  }
  return undefined;
}

/**
 * A request without the task it is augmented with (MCP 2025-11-25's `params.task`): this server
 * declares no `tasks` capability, and "receivers that do not declare the task capability for a
 * request type MUST process requests of that type normally, ignoring any task-augmentation
 * metadata", where the SDK answers -32603 `Server does not support task creation`.
 */
function withoutTask<M>(message: M): M {
  const params = isObject(message) ? message.params : undefined;
  if (!isObject(params) || !('task' in params) || !('id' in (message as object))) return message;
  const { task: _, ...rest } = params;
  return { ...message, params: rest };
}

/**
 * An initialize request (with an id) that the SDK's schema refuses deeper than invalidParams looks
 * (`problem`: protocol.ts initializeProblem), and why, in invalidParams' words.
 */
function initializeRefused(
  message: unknown,
  problem: (initialize: unknown) => string | undefined,
): { id: unknown; message: string } | undefined {
  if (!isObject(message) || message.method !== 'initialize' || message.id === undefined) return undefined;
  const wrong = problem(message);
  return wrong === undefined ? undefined : { id: message.id, message: `${INITIALIZE_TAKES} Here: ${wrong}.` };
}

/** The `initialize` request a body carries (alone, or in a batch), if any. */
function initializeIn(body: unknown): unknown {
  const messages = Array.isArray(body) ? body : [body];
  return messages.find((m) => m !== null && typeof m === 'object' && (m as { method?: unknown }).method === 'initialize');
}

/**
 * A browser page of another site must not drive an agent's session (DNS rebinding, CSRF): a
 * request carrying `Origin` must come from the service's own origin. Agents send none.
 */
function checkOrigin(ctx: Context, publicUrl: string): void {
  const origin = ctx.get('origin');
  if (origin === '') return;
  const own = new Set([`${ctx.protocol}://${ctx.host}`]);
  if (publicUrl !== '') own.add(new URL(publicUrl).origin);
  if (!own.has(origin)) throw new ApiError(403, `Origin '${origin}' may not use this service's MCP endpoint.`);
}
