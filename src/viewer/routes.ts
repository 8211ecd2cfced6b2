/**
 * The viewer's routes: sign-in, the pages, the drawing as SVG and the arrange write. Pages
 * are reached with a session cookie (./sessions.ts), never with the API's key headers; the
 * API under /api/external keeps requiring its key headers and ignores the cookie.
 */
import { isReading, type KeyRates } from '../http/middleware/rate-limit.js';
import Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { ApiError } from '../errors.js';
import { checkBody } from '../model/check-body.js';
import { readSmallBody } from '../http/request-body.js';
import { queryValue, readSnapshot, state, write } from '../http/resource.js';
import { locateDraft } from '../drafts/drafts.js';
import { setEtag } from '../http/respond.js';
import { bodySettingsOf, parseBody } from '../http/middleware/body.js';
import { organizationOf, requireEditor } from '../http/middleware/auth.js';
import type { YamlPool } from '../http/yaml-pool.js';
import type { Draft } from '../model/draft.js';
import type { Orgs } from '../service/orgs.js';
import type { KeyRecord, KeyStore } from '../store/keys.js';
import { ArrangeInput, arrangeDiagram, describeArrange } from './arrange.js';
import { describeEdit, editComponent } from './edit.js';
import { asset } from './assets.js';
import {
  comeAgainPage,
  componentPage,
  diagramHistoryPage,
  diagramPage,
  diagramPath,
  errorPage,
  indexPage,
  shareMadePage,
  sharedDiagramPage,
  signInPage,
} from './pages.js';
import { drawToken, isToken, ShareLinks } from '../share/links.js';
import { ShareContinuity } from '../share/continuity.js';
import { ShareLinkBody } from '../share/schemas.js';
import { makeShareLink, shareUrls } from '../http/routes/share-links.js';
import { pathsOfResource, readHistory } from '../history/log.js';
import { isId } from '../model/ids.js';
import { SESSION_COOKIE, Sessions } from './sessions.js';
import { drawingOf } from '../drawing/drawings.js';
import type { Diagram, Model } from '../model/types.js';
import { deletedInComparedDraft } from '../http/drawing.js';
import { type DrawingFormat, sendDrawing } from './svg-response.js';
import { draftPageRoutes } from './draft-routes.js';
import type { Events } from '../events/events.js';
import { resumeFrom, streamChanges } from '../events/sse.js';
import { commitOnBranch } from '../http/routes/events.js';

export interface ViewerDependencies {
  orgs: Orgs;
  keys: KeyStore;
  /** Read when a request needs it: the server learns its address only once it listens. */
  publicUrl: string;
  /** The server's body settings: the viewer's writes count against the same budget as the API's. */
  bodyLimit: number;
  bodyBudget: number;
  bodyBudgetPerOrg?: number;
  bodyStallTimeout?: number;
  yamlPool: YamlPool;
  sessions?: Sessions;
  shareLinks?: ShareLinks;
  /** The change stream pages listen to (src/events/; static/live.js). */
  events?: Events;
  /** The key's rates, counted with its API requests (pages read, drops and saves write). */
  rates?: KeyRates;
}

/** Sign-in and the share forms: a key, a label. */
const SIGN_IN_BODY_LIMIT = 4096;
const ARRANGE_BODY_LIMIT = 16 * 1024;

interface Viewer {
  key: KeyRecord;
}

function sessionId(ctx: Context): string | undefined {
  return ctx.cookies.get(SESSION_COOKIE) ?? undefined;
}

/** HttpOnly, SameSite=Strict, Secure when the service is reached over https. */
function sessionCookie(ctx: Context, publicUrl: string, value: string, maxAge: number): string {
  const secure = ctx.protocol === 'https' || publicUrl.startsWith('https:');
  return `${SESSION_COOKIE}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/**
 * State-changing page requests must come from the service's own pages: SameSite=Strict
 * keeps the cookie off cross-site requests, and the Origin check refuses them besides
 * (browsers send Origin on every POST; Sec-Fetch-Site covers the rest).
 */
function requireSameOrigin(deps: ViewerDependencies): Middleware {
  return async (ctx, next) => {
    const origin = ctx.get('origin');
    const own = new Set([`${ctx.protocol}://${ctx.host}`]);
    if (deps.publicUrl !== '') own.add(new URL(deps.publicUrl).origin);
    const sameSite = origin !== '' ? own.has(origin) : ctx.get('sec-fetch-site') === 'same-origin';
    if (!sameSite) throw new ApiError(403, 'Cross-site request refused.');
    await next();
  };
}

/** Where readers reach the service: `--public-url`, else the address this request came to. */
function publicOrigin(ctx: Context, deps: ViewerDependencies): string {
  return deps.publicUrl !== '' ? deps.publicUrl : ctx.origin;
}

/** Only a local path may follow sign-in: no open redirect to another site. */
function localPath(next: unknown): string {
  return typeof next === 'string' && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/';
}

async function readForm(ctx: Context, limit: number): Promise<URLSearchParams> {
  if (ctx.request.type !== 'application/x-www-form-urlencoded')
    throw new ApiError(415, `Unsupported Content-Type: ${ctx.request.type || '(none)'}.`);
  return new URLSearchParams((await readSmallBody(ctx.req, limit)).toString('utf8'));
}

/**
 * Only the viewer's own script runs on its pages (model text is escaped, and this holds even if
 * escaping were ever missed), and no other site may frame them: a framed page could be tricked
 * into drops.
 */
const PAGE_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'";

/**
 * A share link's page may be framed anywhere (Confluence, Backstage): it only reads, so there
 * is nothing to trick a visitor into; it posts no form either.
 */
const SHARED_PAGE_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; form-action 'none'; base-uri 'none'";

function sendHtml(ctx: Context, html: string, status = 200, policy = PAGE_POLICY): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Content-Security-Policy', policy);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.body = html;
}

/**
 * The diagram and what of it the last path segment asks for: its page, or its drawing when the
 * segment, as sent, ends in `.svg` or `.png`. An id that itself ends so is written with `%2E`
 * (diagramSegment); typed with a plain dot, it still finds its page when no diagram is named
 * like its stem.
 */
function addressed(ctx: Context, model: Model): { id: string; format?: DrawingFormat } {
  const sent = ctx.path.slice(ctx.path.lastIndexOf('/') + 1);
  const name = String(ctx.params.name);
  const suffix = /\.(svg|png)$/.exec(sent)?.[1] as DrawingFormat | undefined;
  if (suffix) {
    const stem = decodeSegment(sent.slice(0, -suffix.length - 1));
    if (stem !== undefined && model.diagrams.has(stem)) return { id: stem, format: suffix };
    if (!model.diagrams.has(name)) throw new ApiError(404, `Diagram with id '${stem ?? name}' does not exist.`);
  }
  if (!model.diagrams.has(name)) throw new ApiError(404, `Diagram with id '${name}' does not exist.`);
  return { id: name };
}

/**
 * The `.svg` or `.png` of a draft's visual diff (`?draft=<name>&compare=main`) of a diagram the
 * draft deleted, by its id: drawn as main had it, every element marked removed. The diagram has
 * no page in the draft; only its drawings are served so.
 */
async function deletedDrawing(ctx: Context, model: Model): Promise<{ diagram: Diagram; format: DrawingFormat } | undefined> {
  const sent = ctx.path.slice(ctx.path.lastIndexOf('/') + 1);
  const format = /\.(svg|png)$/.exec(sent)?.[1] as DrawingFormat | undefined;
  if (!format) return undefined;
  const stem = decodeSegment(sent.slice(0, -format.length - 1));
  if (stem === undefined || model.diagrams.has(stem) || model.diagrams.has(String(ctx.params.name))) return undefined;
  const diagram = await deletedInComparedDraft(ctx, stem);
  return diagram?.id === stem ? { diagram, format } : undefined;
}

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** Where a browser's request for a page ends when nothing answered it: a page, not the API's JSON. */
const NOT_PAGES = /^\/(?:api|git|mcp|metrics|healthz)(?:\/|$)/;

/**
 * Mounted around every router: a GET of an address nothing serves, from a browser (it prefers
 * HTML to JSON), answers the viewer's 404 page with a way back. API clients (JSON, YAML or any
 * type) and the API's, git's and the agents' paths keep the contract's JSON error.
 *
 * A signed-in visitor keeps the header of every page (Drafts, who is signed in, Sign out): it
 * names the session's own organization only, so an address under another organization's slug,
 * existing or not, tells nothing about it. Without a valid session the page has the bare header.
 */
export function pageNotFound(deps: Pick<ViewerDependencies, 'keys' | 'orgs' | 'sessions'>): Middleware {
  const sessions = deps.sessions ?? new Sessions(deps.keys);
  return async (ctx, next) => {
    await next();
    if (ctx.status !== 404 || ctx.body != null) return;
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return;
    if (NOT_PAGES.test(ctx.path) || ctx.accepts('json', 'html') !== 'html') return;
    const key = await sessions.resolve(sessionId(ctx));
    const signedIn = key !== null && organizationOf(key, deps.orgs) !== undefined;
    sendHtml(ctx, errorPage(404, 'There is no page at this address.', signedIn ? { key } : {}), 404);
  };
}

/**
 * A page's write (a drop, a panel save) through the API's write path, with one difference: a
 * stale `If-Match` whose change is already in place is answered as done, with no commit. That
 * is a write made whose answer was lost — the instance that committed it killed before it
 * answered, behind a load balancer, and the browser or the page sending it again to another —
 * or the very change someone else made meanwhile. Either way the page's wish holds and nothing
 * of anyone's is overwritten; a change still to make is refused for a stale page as before.
 */
async function writeFromPage<R>(ctx: Context, step: (draft: Draft) => R, spoken: (draft: Draft) => string) {
  try {
    return await write(ctx, step, spoken);
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 412) || ctx.get('if-match') === '') throw err;
    delete ctx.req.headers['if-match'];
    return write(
      ctx,
      (draft) => {
        let result: R;
        try {
          result = step(draft);
        } catch {
          throw err; // refused on today's model: still the stale page's refusal
        }
        if (draft.changes.length > 0) throw err;
        return result;
      },
      spoken,
    );
  }
}

export function viewerRouter(deps: ViewerDependencies): Router {
  const sessions = deps.sessions ?? new Sessions(deps.keys);
  const shareLinks = deps.shareLinks ?? new ShareLinks(deps.keys.dataDir);
  const continuity = new ShareContinuity();
  const router = new Router({ sensitive: true });
  const sameOrigin = requireSameOrigin(deps);

  /**
   * Pages need a session: without one, the sign-in page, coming back here afterwards. `count`:
   * how the request counts against the key's rates (a read or a write, by its method).
   */
  const signedInCounting =
    (count: (ctx: Context, key: KeyRecord) => void): Middleware =>
    async (ctx, next) => {
      const key = await sessions.resolve(sessionId(ctx));
      const org = organizationOf(key, deps.orgs);
      if (!key || !org) {
        if (ctx.method === 'GET' || ctx.method === 'HEAD') {
          if (ctx.get('sec-fetch-site') === 'cross-site' && ctx.get('sec-fetch-mode') === 'navigate') {
            // A link followed from another site (a wiki, a ticket, a chat): the browser kept the
            // SameSite=Strict cookie off this navigation, not because there is no session. The
            // page asks for itself again from this site, which carries the cookie; without a
            // session, that request goes on to sign in.
            sendHtml(ctx, comeAgainPage(localPath(ctx.originalUrl)));
            return;
          }
          ctx.redirect(`/sign-in?next=${encodeURIComponent(ctx.originalUrl)}`);
          return;
        }
        throw new ApiError(401, 'Sign in again: the session has ended.');
      }
      count(ctx, key);
      ctx.state.viewer = { key } satisfies Viewer;
      // What the API's handlers read (resource.ts `state`), so a page write takes the API's path.
      ctx.state.key = key;
      ctx.state.org = org;
      await next();
    };
  const signedIn = signedInCounting((ctx, key) => deps.rates?.take(key.id, isReading(ctx.method)));
  /**
   * The pages' change stream: opening it is a read; its `HEAD` is not. live.js asks it each time
   * its stream was refused, to tell why (a session ended, a resume point gone, or neither: try
   * again), so a page left open (a balancer's 502s, a laptop's sleeps) would spend the key's reads
   * on questions that read nothing of the model. It is answered without a count, and `429` like a
   * read while the key is beyond its reads (taking nothing), so it is no way around the limit.
   */
  const signedInToStream = signedInCounting((ctx, key) =>
    ctx.method === 'HEAD' ? deps.rates?.check(key.id, true) : deps.rates?.take(key.id, true),
  );

  /** `/orgs/<slug>/…` of the signed-in organization; another organization asks for its key. */
  const ownOrg: Middleware = async (ctx, next) => {
    const { key } = ctx.state.viewer as Viewer;
    if (ctx.params.slug !== key.org) {
      if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw new ApiError(403, 'This page belongs to another organization.');
      sendHtml(
        ctx,
        signInPage(
          {
            next: ctx.originalUrl,
            message: `This page belongs to organization '${ctx.params.slug}', and you are signed in to '${key.org}'. Sign in with one of its API keys.`,
          },
          { key },
        ),
        403,
      );
      return;
    }
    await next();
  };

  /** Page errors as a page; the script's JSON requests keep the contract's JSON errors. */
  const htmlErrors: Middleware = async (ctx, next: Next) => {
    try {
      await next();
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const viewer = ctx.state.viewer as Viewer | undefined;
      sendHtml(ctx, errorPage(err.status, err.detailed, { key: viewer?.key }), err.status);
    }
  };

  router.get('/viewer/:name', (ctx) => {
    const name = ctx.params.name;
    if (name !== 'viewer.css' && name !== 'viewer.js' && name !== 'live.js') return;
    const found = asset(name);
    ctx.type = found.type;
    ctx.set('Cache-Control', 'no-cache');
    // As every page and drawing: a browser takes it for its type, never sniffs it as another kind.
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = found.body;
  });

  router.get('/sign-in', async (ctx) => {
    sendHtml(ctx, signInPage({ next: localPath(ctx.query.next) }));
  });

  router.post('/sign-in', htmlErrors, sameOrigin, async (ctx) => {
    const form = await readForm(ctx, SIGN_IN_BODY_LIMIT);
    const next = localPath(form.get('next'));
    const key = await deps.keys.verify((form.get('key') ?? '').trim());
    if (!key || !organizationOf(key, deps.orgs)) {
      sendHtml(ctx, signInPage({ next, error: 'This API key is not valid (unknown or revoked).' }), 401);
      return;
    }
    await sessions.close(sessionId(ctx));
    ctx.set('Set-Cookie', sessionCookie(ctx, deps.publicUrl, await sessions.open(key), sessions.lifetimeSeconds));
    ctx.status = 303;
    ctx.redirect(next);
  });

  router.post('/sign-out', sameOrigin, async (ctx) => {
    await sessions.close(sessionId(ctx));
    ctx.set('Set-Cookie', sessionCookie(ctx, deps.publicUrl, '', 0));
    ctx.status = 303;
    ctx.redirect('/sign-in');
  });

  router.get('/', htmlErrors, signedIn, async (ctx) => {
    const { key } = ctx.state.viewer as Viewer;
    const snapshot = await readSnapshot(ctx);
    const query = typeof ctx.query.q === 'string' ? ctx.query.q : '';
    sendHtml(ctx, indexPage(snapshot.model, { key, slug: key.org }, query));
  });

  /** The url of the API before it carried the organization: the signed-in organization's diagram. */
  router.get('/diagrams/:name', htmlErrors, signedIn, async (ctx) => {
    const { key } = ctx.state.viewer as Viewer;
    // Found at the tip; `?at=` travels along and is the new address's business.
    const snapshot = await state(ctx).org.head();
    const { id, format } = addressed(ctx, snapshot.model);
    ctx.status = 301;
    ctx.redirect(`${diagramPath(key.org, id)}${format ? `.${format}` : ''}${ctx.querystring ? `?${ctx.querystring}` : ''}`);
  });

  router.get('/orgs/:slug/diagrams/:name', htmlErrors, signedIn, ownOrg, async (ctx) => {
    const { key } = ctx.state.viewer as Viewer;
    const snapshot = await readSnapshot(ctx);
    const deleted = await deletedDrawing(ctx, snapshot.model);
    if (deleted) return sendDrawing(ctx, snapshot, deleted.diagram, deleted.format);
    const { id, format } = addressed(ctx, snapshot.model);
    const diagram = snapshot.model.diagrams.get(id)!;
    if (format) return sendDrawing(ctx, snapshot, diagram, format);
    setEtag(ctx, snapshot);
    const at = typeof ctx.query.at === 'string' ? snapshot.commit : undefined;
    // A draft's diagram (`?draft=`, as readSnapshot read it): the page's drops and edits go to its branch.
    const draftName = at === undefined ? queryValue(ctx, 'draft') : undefined;
    const draft = draftName === undefined ? undefined : await locateDraft(state(ctx).org, draftName);
    const links =
      key.role === 'editor' && at === undefined && draft === undefined
        ? await shareLinks.list(key.org, state(ctx).org.identity, id)
        : undefined;
    sendHtml(
      ctx,
      await diagramPage(
        diagram,
        snapshot.model,
        { key, slug: key.org },
        {
          commit: snapshot.commit,
          at,
          draft: draft && { name: draft.name, state: draft.state },
          shareLinks: links && { links, token: drawToken() },
        },
      ),
    );
  });

  /**
   * The page's share section: a new link, shown once on a page of its own. The form carries the
   * token the link is to have, drawn with the page: sent again (its answer lost), it shows the
   * link it made again, and makes no second one. A form without one (an older page) gets a new token.
   */
  router.post('/orgs/:slug/diagrams/:id/share-links', htmlErrors, sameOrigin, signedIn, ownOrg, requireEditor, async (ctx) => {
    const { key } = ctx.state.viewer as Viewer;
    const form = await readForm(ctx, SIGN_IN_BODY_LIMIT);
    // The expiry's menu sends days as text: a whole number is read as one, anything else is refused by the schema as it came;
    // 'never' (or nothing: an older page) makes a link that lasts until revoked.
    const chosen = form.get('expiresInDays') ?? undefined;
    const days = chosen === 'never' ? undefined : chosen;
    const made = checkBody(ShareLinkBody, {
      label: form.get('label') ?? '',
      ...(days === undefined ? {} : { expiresInDays: /^\d{1,9}$/.test(days) ? Number(days) : days }),
    });
    const drawn = form.get('token') ?? undefined;
    if (drawn !== undefined && !isToken(drawn))
      throw new ApiError(400, "The form's token is malformed: reload the page to make a share link.");
    const id = String(ctx.params.id);
    const head = await state(ctx).org.head();
    const diagram = head.model.diagrams.get(id);
    if (!diagram) throw new ApiError(404, `Diagram with id '${id}' does not exist.`);
    const { token, link } = await makeShareLink(ctx, shareLinks, id, head.commit, made, drawn);
    sendHtml(ctx, shareMadePage(diagram, link, shareUrls(publicOrigin(ctx, deps), token), { key, slug: key.org }), 201);
  });

  router.post('/orgs/:slug/share-links/:id/revoke', htmlErrors, sameOrigin, signedIn, ownOrg, requireEditor, async (ctx) => {
    const form = await readForm(ctx, SIGN_IN_BODY_LIMIT);
    const [slug, identity, id] = [String(ctx.params.slug), state(ctx).org.identity, String(ctx.params.id)];
    // Revoked already: this revoke sent again after its answer was lost, answered as it was.
    const removed = (await shareLinks.revoke(slug, identity, id)) ?? (await shareLinks.wasRevoked(slug, identity, id));
    if (!removed) throw new ApiError(404, `Share link with id '${id}' does not exist.`);
    ctx.status = 303;
    ctx.redirect(localPath(form.get('next')));
  });

  /**
   * A share link (src/share/links.ts): the diagram's page, SVG or PNG at the tip of `main`, with
   * neither session nor key. Anything a token does not open — malformed, unknown, revoked, its
   * diagram deleted (even if one was made again under its id), its organization gone or made
   * anew — is the same 404.
   */
  router.get('/share/:token', htmlErrors, async (ctx) => {
    const sent = String(ctx.params.token);
    const format = /\.(svg|png)$/.exec(sent)?.[1] as DrawingFormat | undefined;
    const link = await shareLinks.resolve(format ? sent.slice(0, -4) : sent);
    const org = link && deps.orgs.find(link.org);
    const snapshot = org && org.identity === link.orgId ? (await org.readable()).snapshot : undefined;
    const diagram = snapshot?.model.diagrams.get(link!.diagram);
    if (!org || !snapshot || !diagram || !(await continuity.unbroken(org.repo.gitdir, link!, snapshot.commit))) {
      throw new ApiError(404, 'This share link does not exist or was revoked.');
    }
    // No address of the page may travel on to another site: it is the key to the drawing.
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('X-Robots-Tag', 'noindex');
    if (format) return sendDrawing(ctx, snapshot, diagram, format, 'shared');
    // The page's address from its token, not as sent: `/share/<token>/` would link `/share/<token>/.svg`.
    sendHtml(ctx, await sharedDiagramPage(diagram, snapshot.model, `/share/${encodeURIComponent(sent)}`), 200, SHARED_PAGE_POLICY);
    ctx.set('Referrer-Policy', 'no-referrer');
  });

  router.get('/orgs/:slug/diagrams/:id/history', htmlErrors, signedIn, ownOrg, async (ctx) => {
    const { key } = ctx.state.viewer as Viewer;
    const id = String(ctx.params.id);
    const { org } = state(ctx);
    // `?draft=`: the history of the diagram as the draft's branch has it.
    const draft = queryValue(ctx, 'draft');
    const ref = draft === undefined ? undefined : (await locateDraft(org, draft)).ref;
    const tip = ref === undefined ? undefined : ((await org.repo.readBranch(ref)) ?? undefined);
    const entries = isId(id) ? await readHistory(org.repo.gitdir, { limit: 100, tip, paths: pathsOfResource(id, 'diagram') }) : [];
    const diagram =
      (await org.tip(ref)).model.diagrams.get(id) ??
      (entries.length > 0 ? { id, name: entries[0].resources.find((r) => r.id === id)?.name ?? id } : undefined);
    if (!diagram) throw new ApiError(404, `Diagram with id '${id}' does not exist.`);
    sendHtml(ctx, diagramHistoryPage(diagram, entries, { key, slug: key.org }, draft));
  });

  router.get('/orgs/:slug/components/:id', htmlErrors, signedIn, ownOrg, async (ctx) => {
    const { key } = ctx.state.viewer as Viewer;
    const snapshot = await readSnapshot(ctx);
    const component = snapshot.model.components.get(String(ctx.params.id));
    if (!component) throw new ApiError(404, `Component with id '${ctx.params.id}' does not exist.`);
    sendHtml(ctx, componentPage(component, snapshot.model, { key, slug: key.org }));
  });

  /**
   * The organization's changes as SSE, for the pages' live.js: the API's stream, reached with the
   * session; `?draft=<name>` (a draft's diagram page) the draft's, as `/api/external/events?draft=`.
   */
  router.get('/orgs/:slug/events', signedInToStream, ownOrg, async (ctx) => {
    if (deps.events === undefined) throw new ApiError(404, 'Not found.');
    const { org } = state(ctx);
    const draft = queryValue(ctx, 'draft');
    const located = draft === undefined ? undefined : await locateDraft(org, draft);
    // A draft's page follows it while it is open: merged or closed, it changes no more, and its
    // page is told so (409; live.js says it on the page) rather than listening on in silence.
    if (located !== undefined && located.state !== 'open')
      throw new ApiError(409, `Draft '${located.name}' is ${located.state}: it changes no more.`);
    const branch = located === undefined ? deps.events.of(org.slug) : deps.events.of(org.slug, located.ref);
    // Resume points read as the API's stream reads them (an abbreviation, a version, `main`).
    const from = resumeFrom(ctx);
    const after = from === undefined ? undefined : await commitOnBranch(ctx, branch, from);
    const session = sessionId(ctx);
    // Asked at each heartbeat: the session still opens the organization, and the draft is still open
    // (merged or closed meanwhile, the stream ends, and the page, asking again, is told).
    const stillAllowed = async () =>
      organizationOf(await sessions.resolve(session), deps.orgs) === org &&
      (draft === undefined || (await locateDraft(org, draft)).state === 'open');
    await streamChanges(ctx, branch, after, deps.events.stream, stillAllowed);
  });

  /**
   * One drop of the page's script: one write through the API's write path, one commit; with
   * `?draft=<name>` (a draft's page) on the draft's branch, never on main (write() reads it; a
   * merged or closed draft: 409 with the contract's text).
   */
  router.post(
    '/orgs/:slug/diagrams/:id/arrange',
    sameOrigin,
    signedIn,
    ownOrg,
    requireEditor,
    parseBody({ ...bodySettingsOf(deps), limitBytes: ARRANGE_BODY_LIMIT }),
    async (ctx) => {
      const move = checkBody(ArrangeInput, ctx.request.body);
      const id = String(ctx.params.id);
      const { snapshot, result } = await writeFromPage(
        ctx,
        (draft) => arrangeDiagram(draft, id, move),
        (draft) => describeArrange(draft, id, move),
      );
      setEtag(ctx, snapshot);
      ctx.type = 'application/json; charset=utf-8';
      ctx.body = JSON.stringify({
        commit: snapshot.commit,
        svg: await drawingOf(result, snapshot.model, { componentHref: '#c-', editable: true }),
      });
    },
  );

  /** The panel's form: a component's name and description, one commit; back to the page it came from. */
  router.post('/orgs/:slug/components/:id/edit', htmlErrors, sameOrigin, signedIn, ownOrg, requireEditor, async (ctx) => {
    const form = await readForm(ctx, deps.bodyLimit);
    const commit = form.get('commit') ?? '';
    // The commit the page showed, as the script's If-Match: a stale page changes nothing.
    if (commit !== '') ctx.req.headers['if-match'] = `"${commit}"`;
    const id = String(ctx.params.id);
    try {
      await writeFromPage(
        ctx,
        (draft) => editComponent(draft, id, { name: form.get('name') ?? '', desc: form.get('desc') ?? '' }),
        (draft) => describeEdit(draft, id),
      );
    } catch (err) {
      if (err instanceof ApiError && err.status === 412) {
        throw new ApiError(
          412,
          'The model changed since this page was loaded: reload the page and make your change again. Nothing was saved.',
        );
      }
      throw err;
    }
    ctx.status = 303;
    ctx.redirect(localPath(form.get('next')));
  });

  draftPageRoutes(router, {
    htmlErrors,
    sameOrigin,
    signedIn,
    ownOrg,
    readForm: (ctx) => readForm(ctx, deps.bodyLimit),
    sendHtml,
    publicOrigin: (ctx) => publicOrigin(ctx, deps),
  });
  return router;
}
