import { randomBytes } from 'node:crypto';
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { drawDiagramOffThread } from '../drawing/draw-pool.js';
import { ApiError } from '../errors.js';
import { toApiError } from '../http/middleware/errors.js';
import { readSnapshot, state } from '../http/resource.js';
import type { KeyRecord } from '../store/keys.js';
import { checkArguments, modelYaml, type Tool, type ToolContext } from './tools.js';

/**
 * `/mcp`: the Model Context Protocol over streamable HTTP (CONTRACT.md §10), served by the
 * official SDK's transport, behind the same key check, rates, body bounds and connection caps
 * as the API (the router's middleware, given by http/app.ts).
 *
 * A session is made by `initialize` and lives in this process: it keeps the client's name (the
 * SDK's 1.x clients send it only then) for the `Agent:` trailer of its commits. A request naming
 * a session this process does not know (another instance, a restart) is answered 404, on which
 * the protocol has clients start a new session. A session belongs to the key that made it.
 */

export interface McpSettings {
  publicUrl: string;
  tools: readonly Tool[];
  /** Sessions kept at once; the one idle longest is closed to make room. */
  maxSessions?: number;
  /** A session unused this long is closed (ms). */
  idleMs?: number;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  keyId: string;
  lastUsed: number;
}

const SESSION_HEADER = 'mcp-session-id';
const DEFAULT_MAX_SESSIONS = 1000;
const DEFAULT_IDLE_MS = 30 * 60 * 1000;
/**
 * The HTTP request that carries a call, handed to the tool handlers through the SDK's
 * `authInfo` (the transport passes `req.auth` on to every handler of that request).
 */
function carry(ctx: Context): void {
  const { key } = state(ctx);
  (ctx.req as typeof ctx.req & { auth: AuthInfo }).auth = { token: '', clientId: key.id, scopes: [key.role], extra: { ctx } };
}

function carried(extra: { authInfo?: AuthInfo }): Context {
  const ctx = extra.authInfo?.extra?.ctx as Context | undefined;
  if (ctx === undefined) throw new Error('an MCP request reached a handler without its HTTP request');
  return ctx;
}

/** `middleware`: the key check, rates and send bounds; `parse`: the body reader, for POST. */
export function mcpRouter(middleware: Middleware[], parse: Middleware, settings: McpSettings): Router {
  const sessions = new Map<string, Session>();
  const router = new Router({ sensitive: true });
  const maxSessions = settings.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const idleMs = settings.idleMs ?? DEFAULT_IDLE_MS;

  const closeSession = (id: string) => {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    void session.server.close().catch(() => {});
  };
  const sweep = () => {
    const now = Date.now();
    for (const [id, session] of sessions) if (now - session.lastUsed > idleMs) closeSession(id);
    while (sessions.size >= maxSessions) {
      const [oldest] = [...sessions.entries()].sort((a, b) => a[1].lastUsed - b[1].lastUsed);
      closeSession(oldest![0]);
    }
  };

  const newSession = (key: KeyRecord): Session => {
    sweep();
    const server = serverFor(settings);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomBytes(24).toString('base64url'),
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        sessions.set(id, session);
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    const session: Session = { transport, server, keyId: key.id, lastUsed: Date.now() };
    return session;
  };

  const handle = async (ctx: Context) => {
    checkOrigin(ctx, settings.publicUrl);
    const { key } = state(ctx);
    const id = ctx.get(SESSION_HEADER);
    let session: Session | undefined;
    if (id === '') {
      if (ctx.method !== 'POST' || !isInitialize(ctx.request.body)) {
        throw new ApiError(400, 'Start with an initialize request: this request names no Mcp-Session-Id.');
      }
      session = newSession(key);
      await session.server.connect(session.transport);
    } else {
      session = sessions.get(id);
      // Another key cannot use a session it did not make; it learns nothing of it either.
      if (!session || session.keyId !== key.id) throw new ApiError(404, 'Session not found: initialize a new one.');
    }
    session.lastUsed = Date.now();
    carry(ctx);
    ctx.respond = false;
    await session.transport.handleRequest(ctx.req, ctx.res, ctx.method === 'POST' ? ctx.request.body : undefined);
  };

  router.post('/mcp', ...middleware, parse, handle);
  router.get('/mcp', ...middleware, async (ctx) => {
    // No server-initiated stream: every answer comes with its request (JSON answers).
    ctx.set('Allow', 'POST, DELETE');
    throw new ApiError(405, 'Method not allowed.');
  });
  router.delete('/mcp', ...middleware, handle);
  return router;
}

function isInitialize(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => m !== null && typeof m === 'object' && (m as { method?: unknown }).method === 'initialize');
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

/** The SDK's server with c4store's tools: the key's role decides which it lists and runs. */
function serverFor(settings: McpSettings): Server {
  const server = new Server(
    { name: 'c4store', version: '1' },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        "c4store holds this organization's C4 architecture model. Read with search, get_component, get_diagram, render_diagram, get_model, history and diff. Propose changes in a draft (create_draft, then write_model into it, then draft_diff): people review and merge drafts; an agent never writes to main.",
    },
  );
  const toolsFor = (ctx: Context) => settings.tools.filter((t) => t.readOnly || state(ctx).key.role === 'editor');
  server.setRequestHandler(ListToolsRequestSchema, async (_, extra) => {
    const ctx = carried(extra);
    return {
      tools: toolsFor(ctx).map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: t.input as { type: 'object' },
        annotations: { title: t.title, readOnlyHint: t.readOnly, destructiveHint: false, openWorldHint: false },
      })),
    };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const ctx = carried(extra);
    const definition = toolsFor(ctx).find((t) => t.name === request.params.name);
    if (!definition) return toolError(`Unknown tool '${request.params.name}'.`);
    const context: ToolContext = { ctx, publicUrl: settings.publicUrl, clientName: server.getClientVersion()?.name ?? 'unknown' };
    try {
      const answer = await definition.run(checkArguments(definition, request.params.arguments) as never, context);
      const image = answer.image ? [{ type: 'image' as const, data: answer.image.data, mimeType: answer.image.mimeType }] : [];
      return { content: [{ type: 'text', text: answer.text }, ...image], structuredContent: answer.structured };
    } catch (err) {
      // The REST API's texts: a refusal is the agent's to read and act on, not a protocol failure.
      const refusal = toApiError(err);
      if (refusal) return toolError(refusal.message);
      throw err;
    }
  });
  server.setRequestHandler(ListResourcesRequestSchema, async (request, extra) => {
    const { model } = await readSnapshot(carried(extra));
    const diagrams = [...model.diagrams.values()];
    const start = Number(request.params?.cursor ?? 0) || 0;
    const page = diagrams.slice(start, start + RESOURCES_PER_PAGE);
    return {
      resources: [
        ...(start === 0 ? [{ uri: MODEL_URI, name: 'model.yaml', title: 'The whole model (YAML)', mimeType: 'application/yaml' }] : []),
        ...page.map((d) => ({
          uri: `${DIAGRAM_URI}${d.id}.svg`,
          name: `${d.id}.svg`,
          title: `${d.name} (${d.level})`,
          mimeType: 'image/svg+xml',
        })),
      ],
      ...(start + RESOURCES_PER_PAGE < diagrams.length ? { nextCursor: String(start + RESOURCES_PER_PAGE) } : {}),
    };
  });
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const ctx = carried(extra);
    const { model } = await readSnapshot(ctx);
    const { uri } = request.params;
    if (uri === MODEL_URI) return { contents: [{ uri, mimeType: 'application/yaml', text: modelYaml(model, settings.publicUrl) }] };
    const id = uri.startsWith(DIAGRAM_URI) && uri.endsWith('.svg') ? uri.slice(DIAGRAM_URI.length, -'.svg'.length) : undefined;
    const diagram = id === undefined ? undefined : model.diagrams.get(id);
    if (!diagram) throw new McpError(ErrorCode.InvalidParams, `Resource '${uri}' does not exist.`);
    return { contents: [{ uri, mimeType: 'image/svg+xml', text: await drawDiagramOffThread(diagram, model) }] };
  });
  return server;
}

const MODEL_URI = 'c4store:///model.yaml';
const DIAGRAM_URI = 'c4store:///diagrams/';
const RESOURCES_PER_PAGE = 500;

function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
