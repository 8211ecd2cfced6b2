/**
 * The protocol side of `/mcp` (endpoint.ts has the HTTP side): the official SDK's server with
 * c4store's tools and resources, and its streamable HTTP transport. Loaded with the first
 * session, not at start: the SDK and its schema libraries are a fifth of the server's code and
 * took ~90 ms of every start-up that no agent may ever use.
 */
import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  InitializeRequestSchema,
  JSONRPCMessageSchema,
  LATEST_PROTOCOL_VERSION,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { drawingOf } from '../drawing/drawings.js';
import { toApiError } from '../http/middleware/errors.js';
import { redactKeys } from '../http/middleware/log.js';
import { state } from '../http/resource.js';
import type { KeyRecord } from '../store/keys.js';
import type { McpSettings } from './endpoint.js';
import { ANSWER_CHARS, fitted, sentenceWithin } from './fit.js';
import { checkArguments, FACTS_CHARS, modelPage, modelYaml, snapshotOf, type ToolContext } from './tools.js';

type Role = KeyRecord['role'];

/** A session's server and transport; the transport tells of the session's id once `initialize` has made it. */
export function openSession(
  settings: McpSettings,
  role: Role,
  events: { initialized(id: string): void; closed(id: string): void },
): { server: Server; transport: StreamableHTTPServerTransport } {
  const server = serverFor(settings, role);
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomBytes(24).toString('base64url'),
    enableJsonResponse: true,
    onsessioninitialized: (id) => events.initialized(id),
    onsessionclosed: (id) => events.closed(id),
  });
  return { server, transport };
}

/**
 * The protocol version an `initialize` request settles on, by the rule of the SDK's server
 * (`Server._oninitialize`, which keeps it to itself): the version the client asks for when the
 * SDK supports it, else the SDK's latest.
 */
export function negotiatedVersion(initialize: unknown): string {
  const asked = (initialize as { params?: { protocolVersion?: unknown } } | null)?.params?.protocolVersion;
  return typeof asked === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : LATEST_PROTOCOL_VERSION;
}

/**
 * Why `initialize` is no initialize request the SDK takes (its schema's first complaint, with its
 * path in the params), or undefined: one it does not take, its transport answers `Server not
 * initialized` (-32000, no id), as if no initialize had been sent.
 */
export function initializeProblem(initialize: unknown): string | undefined {
  const parsed = InitializeRequestSchema.safeParse(initialize);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0]!;
  return `${issue.path.filter((step) => step !== 'params').join('.')}: ${issue.message}`;
}

/** Whether `value` is a JSON-RPC message by the SDK's own rule, which its transport would otherwise answer -32700. */
export function isMessage(value: unknown): boolean {
  return JSONRPCMessageSchema.safeParse(value).success;
}

function carried(extra: { authInfo?: AuthInfo }): Context {
  const ctx = extra.authInfo?.extra?.ctx as Context | undefined;
  if (ctx === undefined) throw new Error('an MCP request reached a handler without its HTTP request');
  return ctx;
}

/**
 * What `initialize` tells an agent, by its key's role: a reader's names only the tools it is given
 * (it is listed none that write), and says it may only read, so that it does not set out to propose
 * a change it cannot make.
 */
const INSTRUCTIONS: Record<Role, string> = {
  editor:
    "c4store holds this organization's C4 architecture model. Read with search, get_component, get_diagram, render_diagram, get_model, history and diff. Propose changes in a draft (create_draft, then write_model into it, then draft_diff): people review and merge drafts; an agent never writes to main.",
  reader:
    "c4store holds this organization's C4 architecture model. Read with search, get_component, get_diagram, render_diagram, get_model, history and diff. A draft is a change proposed for people to review and merge: draft_diff says what one changes, and the read tools' draft argument reads its model. This API key may only read: it cannot propose changes.",
};

/** The SDK's server with c4store's tools: the key's role decides what it is told, and which tools it lists and runs. */
function serverFor(settings: McpSettings, role: Role): Server {
  const server = new Server(
    { name: 'c4store', version: '1' },
    { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS[role] },
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
    if (!definition) {
      // A reader key is not given the tools that write; it is told why, as a refusal an agent reads.
      if (settings.tools.some((t) => t.name === request.params.name)) {
        return toolError(`Tool '${request.params.name}' changes the model: this API key may only read.`);
      }
      // The MCP specification makes an unknown tool a protocol error, not a tool's result.
      throw new ProtocolError(ErrorCode.InvalidParams, `Unknown tool '${request.params.name}'.`);
    }
    const context: ToolContext = {
      ctx,
      publicUrl: settings.publicUrl,
      clientName: agentName(server.getClientVersion()?.name),
      warnings: [],
    };
    try {
      const args = checkArguments(definition, request.params.arguments);
      await state(ctx).org.testPauses?.toolCalled?.(definition.name);
      const answer = await definition.run(args as never, context);
      const image = answer.image ? [{ type: 'image' as const, data: answer.image.data, mimeType: answer.image.mimeType }] : [];
      const facts = answer.facts ? [{ type: 'text' as const, text: JSON.stringify(fitted(answer.facts, FACTS_CHARS).value) }] : [];
      const warnings = [...new Set(context.warnings)].map((text) => ({ type: 'text' as const, text: `Warning: ${text}` }));
      return {
        content: [...warnings, { type: 'text', text: answer.text }, ...image, ...facts],
        ...(answer.structured ? { structuredContent: answer.structured } : {}),
      };
    } catch (err) {
      // The REST API's texts: a refusal is the agent's to read and act on, not a protocol failure. With what
      // it concerns (ApiError.detailed): an agent has no header to read, and must know which element to fix.
      const refusal = toApiError(err);
      if (refusal) return toolError(refusal.detailed);
      // A fault of the server's (a bug, a damaged repository) is the tool's failure too: the agent reads it.
      return toolError(unexpected(settings, ctx, definition.name, `tools/call '${definition.name}'`, err));
    }
  });
  server.setRequestHandler(ListResourcesRequestSchema, async (request, extra) => {
    const ctx = carried(extra);
    const { model } = await plainly(settings, ctx, 'resources/list', 'resources/list', () => snapshotOf(ctx));
    const diagrams = [...model.diagrams.values()];
    const start = pageStart(request.params?.cursor);
    const page = diagrams.slice(start, start + RESOURCES_PER_PAGE);
    return {
      resources: [
        ...(start === 0
          ? [
              {
                uri: MODEL_URI,
                name: 'model.yaml',
                title: 'The whole model (YAML)',
                description: `The whole model as YAML, ${ANSWER_CHARS.toLocaleString('en')} characters a page: a page that is not the last ends with a comment naming the next one's address (${MODEL_URI}?offset=<n>).`,
                mimeType: 'application/yaml',
              },
            ]
          : []),
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
  // Clients call it to discover resources whatever they list (the resources capability has no flag
  // for it), and some (gateways) refuse a server that answers -32601. Any diagram by its id, too.
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      { uriTemplate: `${DIAGRAM_URI}{id}.svg`, name: 'diagram', title: 'A diagram drawn (SVG), by its id', mimeType: 'image/svg+xml' },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const ctx = carried(extra);
    const { uri } = request.params;
    return plainly(settings, ctx, 'resources/read', `resources/read '${sentenceWithin(uri, 200)}'`, async () => {
      const { model } = await snapshotOf(ctx);
      const offset = modelOffset(uri);
      if (offset !== undefined) {
        const yaml = modelYaml(model, settings.publicUrl);
        const { text } = modelPage(yaml, offset, (next) => `read ${MODEL_URI}?offset=${next} (or call get_model with offset ${next})`);
        return { contents: [{ uri, mimeType: 'application/yaml', text }] };
      }
      const id = uri.startsWith(DIAGRAM_URI) && uri.endsWith('.svg') ? uri.slice(DIAGRAM_URI.length, -'.svg'.length) : undefined;
      const diagram = id === undefined ? undefined : model.diagrams.get(id);
      if (!diagram) throw new ProtocolError(ErrorCode.InvalidParams, `Resource '${uri}' does not exist.`);
      return { contents: [{ uri, mimeType: 'image/svg+xml', text: await drawingOf(diagram, model) }] };
    });
  });
  return server;
}

/**
 * An unexpected error met by `name` (a tool, or a resources method; `what` for the log: the
 * method and what it was asked for), a bug or a damaged repository, logged as the errors
 * middleware logs one answered 500, with the request's id (`X-Request-Id`); what the agent is told
 * instead, which names neither paths nor commands nor a stack (they stay in the log). Not thrown
 * on: the SDK would send its message (a git command, the repository's path) and its own `code` (a
 * git exit status) as the JSON-RPC error's.
 */
function unexpected(settings: McpSettings, ctx: Context, name: string, what: string, err: unknown): string {
  const requestId = String(ctx.state.requestId);
  settings.logError(requestId, redactKeys(`error ${ctx.method} ${ctx.path} ${what}: ${(err as Error)?.stack ?? String(err)}`));
  return `Internal error: ${name} could not be carried out. The server's log has the details, under request id '${requestId}'.`;
}

/**
 * `run`, a resources method's work, whose failures reach the agent as protocol errors in words:
 * its own (ProtocolError) as they are; a refusal of the API's (ApiError) as -32602 (a 4xx: what was
 * asked) or -32603 (a 5xx: the service's state, such as a model in git that does not load), in the
 * API's words; anything else as unexpected() has it, -32603. Tools answer theirs as tool errors.
 */
async function plainly<T>(settings: McpSettings, ctx: Context, method: string, what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ProtocolError) throw err;
    const refusal = toApiError(err);
    if (refusal) throw new ProtocolError(refusal.status < 500 ? ErrorCode.InvalidParams : ErrorCode.InternalError, refusal.detailed);
    throw new ProtocolError(ErrorCode.InternalError, unexpected(settings, ctx, method, what, err));
  }
}

/**
 * The offset of the page of the model a resource address names: `c4store:///model.yaml` the first
 * page (0), `c4store:///model.yaml?offset=<n>` the one at `n` (a whole number, as the pages name
 * them); undefined for any other address, which names no page of the model.
 */
function modelOffset(uri: string): number | undefined {
  if (uri === MODEL_URI) return 0;
  const offset = uri.startsWith(`${MODEL_URI}?offset=`) ? uri.slice(`${MODEL_URI}?offset=`.length) : undefined;
  return offset !== undefined && /^(0|[1-9][0-9]{0,8})$/.test(offset) ? Number(offset) : undefined;
}

/** The longest client name an `Agent:` trailer carries: enough for any real client's, and every commit of an agent carries it. */
const AGENT_NAME_CHARS = 100;

/**
 * The client's name as its commits' `Agent:` trailer gives it: the name its `initialize` sent is
 * the client's to choose, of any length (up to the body limit) and possibly blank.
 */
function agentName(name: string | undefined): string {
  if (name === undefined) return 'unknown';
  const trimmed = name.trim();
  if (trimmed === '') return '(no name given)';
  // By code points: a cut never splits a surrogate pair.
  const chars = Array.from(trimmed);
  return chars.length <= AGENT_NAME_CHARS ? trimmed : `${chars.slice(0, AGENT_NAME_CHARS - 1).join('')}…`;
}

/**
 * Where the page a `resources/list` cursor names starts: the cursors given are the index of a
 * page's first diagram. Any other text (a negative number, a fraction, a word) names no page,
 * and the protocol answers such a cursor -32602 rather than a page of its own making.
 */
function pageStart(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  if (!/^(0|[1-9][0-9]{0,8})$/.test(cursor)) {
    throw new ProtocolError(
      ErrorCode.InvalidParams,
      `Invalid cursor '${cursor}': use the nextCursor of the previous resources/list answer.`,
    );
  }
  return Number(cursor);
}

/**
 * A JSON-RPC error of a request handler: the SDK answers with its `code` and `message`. Not the
 * SDK's McpError, whose message starts "MCP error <code>: ", to which the client's own McpError
 * adds the same again ("MCP error -32602: MCP error -32602: Resource …").
 */
class ProtocolError extends Error {
  constructor(
    readonly code: number,
    sentence: string,
  ) {
    super(sentenceWithin(sentence));
  }
}

const MODEL_URI = 'c4store:///model.yaml';
const DIAGRAM_URI = 'c4store:///diagrams/';
const RESOURCES_PER_PAGE = 500;

/** A refusal, within an answer's size like every answer: it may name an argument of megabytes. */
function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text: sentenceWithin(text) }], isError: true };
}
