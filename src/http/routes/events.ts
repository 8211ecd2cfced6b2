import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { ApiError } from '../../errors.js';
import { redactUrl } from '../../credentials.js';
import type { Events } from '../../events/events.js';
import { readDraftStates } from '../../events/draft-notices.js';
import { NotOnBranchError } from '../../store/branches.js';
import type { OrgEvents } from '../../events/hub.js';
import { locateDraft } from '../../drafts/drafts.js';
import { ReplayBody, WebhookBody } from '../../events/schemas.js';
import { resumeFrom, streamChanges } from '../../events/sse.js';
import { checkTargetUrl } from '../../events/targets.js';
import { DamagedWebhook, EVENT_TYPES, type Subscription, type SubscriptionState, TooManyWebhooks } from '../../events/webhook-store.js';
import { resolveCommitName } from '../../service/commit-names.js';
import { organizationOf, presentedKey, requireEditor } from '../middleware/auth.js';
import type { Orgs } from '../../service/orgs.js';
import type { KeyStore } from '../../store/keys.js';
import { checkRequestBody } from '../request-body.js';
import { limitParameter, queryValue, readBranchTip, readSnapshot, state } from '../resource.js';
import { send, setEtag } from '../respond.js';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

export interface EventRouteSettings {
  /** Set by the server: the feed, live events and webhooks (src/events/). */
  events?: Events;
  /** For a stream to ask whether its key still opens its organization. */
  keys: KeyStore;
  orgs: Orgs;
}

function eventsOf(deps: EventRouteSettings): Events {
  if (deps.events === undefined) throw new Error('The server was started without its events.');
  return deps.events;
}

/** The events of `main`, or with `?draft=<name>` of that draft's branch (404 when there is no such draft). */
async function branchEvents(ctx: Context, events: Events): Promise<OrgEvents> {
  const { org } = state(ctx);
  const draft = queryValue(ctx, 'draft');
  if (draft === undefined) return events.of(org.slug);
  return events.of(org.slug, (await locateDraft(org, draft)).ref);
}

/**
 * The branch's tip, which the feed and the stream read and their ETag names: `?at=` is checked
 * (404 for an unknown commit), as on every GET, and changes nothing else here. Named by the ETag,
 * an older commit made the feed answer 304 while main moved on.
 */
async function tipRead(ctx: Context) {
  if (queryValue(ctx, 'at') !== undefined) await readSnapshot(ctx);
  return readBranchTip(ctx);
}

/**
 * A commit given as a resume point: a revision (commit-names.ts) that must be on the branch
 * (`main` unless given). The feed's, the API's stream's and the viewer's one reading.
 */
export async function commitOnBranch(ctx: Context, events: Events | OrgEvents, text: string): Promise<string> {
  const commit = await resolveCommitName(state(ctx).org.repo, text);
  const feed = 'feed' in events ? events.feed : events.of(state(ctx).org.slug).feed;
  await feed.sync();
  if (feed.positionOf(commit) === undefined) throw new ApiError(404, new NotOnBranchError(text, feed.ref).message);
  return commit;
}

function presentSubscription(subscription: Subscription, status: SubscriptionState) {
  return {
    id: subscription.id,
    // Its credentials (`user:pass@`, `?token=`) are the receiver's secret, as the signing secret is.
    url: redactUrl(subscription.url),
    events: subscription.events,
    created: subscription.created,
    status: status.disabled ? ('disabled' as const) : ('active' as const),
    disabledReason: status.disabled?.reason ?? null,
    delivered: status.cursor,
    pendingAttempts: status.retry?.attempts ?? 0,
  };
}

export function eventRoutes(router: Router, writing: Middleware[], deps: EventRouteSettings): void {
  router.get('/changes', async (ctx) => {
    const branch = await branchEvents(ctx, eventsOf(deps));
    const limit = limitParameter(ctx, DEFAULT_LIMIT, MAX_LIMIT);
    const afterText = queryValue(ctx, 'after');
    const after = afterText === undefined ? undefined : await commitOnBranch(ctx, branch, afterText);
    const head = await tipRead(ctx);
    try {
      const page = await branch.feed.page(after, limit);
      const changes = page.events.map((event) => event.change);
      await send(ctx, { changes, next: page.more ? changes.at(-1)!.id : null }, head);
    } catch (error) {
      if (error instanceof NotOnBranchError) throw new ApiError(404, error.message);
      throw error;
    }
  });

  router.get('/events', async (ctx) => {
    const events = eventsOf(deps);
    const branch = await branchEvents(ctx, events);
    const from = resumeFrom(ctx);
    const after = from === undefined ? undefined : await commitOnBranch(ctx, branch, from);
    // The stream starts after the tip named by its ETag (or after `after`).
    setEtag(ctx, await tipRead(ctx));
    const presented = presentedKey(ctx);
    const { org } = state(ctx);
    const stillAllowed = async () => organizationOf(await deps.keys.verify(presented), deps.orgs) === org;
    await streamChanges(ctx, branch, after, events.stream, stillAllowed);
  });

  // Subscriptions name where the organization's changes go: made, seen and removed with an editor key.
  router.post('/webhooks', ...writing, async (ctx) => {
    const events = eventsOf(deps);
    const body = checkRequestBody(ctx, WebhookBody);
    const url = await checkTargetUrl(body.url, events.deliverer.allowPrivate);
    const { org } = state(ctx);
    const tip = await org.repo.readHead();
    if (tip === null) throw new Error(`Organization ${org.slug} has no main branch`);
    const types = body.events === undefined ? [...EVENT_TYPES] : [...new Set(body.events)];
    if (types.length === 0) throw new ApiError(400, "A webhook needs at least one event type in 'events'.");
    // Draft events from now on: the drafts as they stand are where its delivery of them starts.
    const { states } = await readDraftStates(org.repo.gitdir);
    const subscription = await events.webhooks
      .create({ org: org.slug, orgId: org.identity, url, events: types }, tip, states)
      .catch((err: unknown) => {
        throw err instanceof TooManyWebhooks ? new ApiError(409, err.message) : err;
      });
    events.deliverer.scan();
    ctx.status = 201;
    ctx.set('Location', `/api/external/webhooks/${subscription.id}`);
    await send(ctx, { ...presentSubscription(subscription, { cursor: tip }), secret: subscription.secret });
  });

  router.get('/webhooks', requireEditor, async (ctx) => {
    const events = eventsOf(deps);
    const { org } = state(ctx);
    const head = await tipRead(ctx);
    const { subscriptions, damaged } = await events.webhooks.overview(org.slug, org.identity);
    const found = [
      ...subscriptions.map(({ subscription, state }) => presentSubscription(subscription, state)),
      ...damaged.map((error) => ({ id: error.id, status: 'damaged' as const, disabledReason: error.message })),
    ];
    // The ETag every read carries (the tip of main); subscriptions change beside it, so no 304.
    setEtag(ctx, head);
    await send(ctx, found);
  });

  /** The subscription named in the path, of this organization. */
  async function subscriptionOf(ctx: Context): Promise<{ subscription: Subscription; status: SubscriptionState }> {
    const events = eventsOf(deps);
    const { org } = state(ctx);
    const id = String(ctx.params.id);
    const read = async () => {
      const subscription = await events.webhooks.get(org.slug, id);
      return { subscription, status: subscription && (await events.webhooks.state(org.slug, id)) };
    };
    const { subscription, status } = await read().catch((error: unknown) => {
      throw error instanceof DamagedWebhook ? new ApiError(503, error.message) : error;
    });
    if (!subscription || !status || (subscription.orgId !== undefined && subscription.orgId !== org.identity)) {
      throw new ApiError(404, `Webhook with id '${id}' does not exist.`);
    }
    return { subscription, status };
  }

  router.get('/webhooks/:id', requireEditor, async (ctx) => {
    const head = await tipRead(ctx);
    const { subscription, status } = await subscriptionOf(ctx);
    setEtag(ctx, head);
    await send(ctx, presentSubscription(subscription, status));
  });

  router.delete('/webhooks/:id', requireEditor, async (ctx) => {
    const events = eventsOf(deps);
    const { org } = state(ctx);
    const id = String(ctx.params.id);
    // A damaged one is removed as it is: that is how it is put right.
    const damaged = await Promise.all([events.webhooks.get(org.slug, id), events.webhooks.state(org.slug, id)]).then(
      () => undefined,
      (error: unknown) => (error instanceof DamagedWebhook ? error : Promise.reject(error)),
    );
    if (damaged !== undefined) {
      await events.webhooks.remove(damaged.org, damaged.id);
      await send(ctx, { id: damaged.id, status: 'damaged', disabledReason: damaged.message });
      return;
    }
    const { subscription, status } = await subscriptionOf(ctx);
    await events.webhooks.remove(subscription.org, subscription.id);
    events.deliverer.poke(subscription.org, subscription.id);
    await send(ctx, presentSubscription(subscription, status));
  });

  router.get('/webhooks/:id/deliveries', requireEditor, async (ctx) => {
    const events = eventsOf(deps);
    const head = await tipRead(ctx);
    const { subscription } = await subscriptionOf(ctx);
    setEtag(ctx, head);
    await send(ctx, await events.webhooks.deliveries(subscription.org, subscription.id, limitParameter(ctx, DEFAULT_LIMIT, MAX_LIMIT)));
  });

  /** Delivers every change after `after` again, in order; a disabled subscription is enabled again. */
  router.post('/webhooks/:id/replay', ...writing, async (ctx) => {
    const events = eventsOf(deps);
    const { subscription } = await subscriptionOf(ctx);
    const body = checkRequestBody(ctx, ReplayBody);
    const after = await commitOnBranch(ctx, events, body.after);
    const status = await events.webhooks.updateState(subscription.org, subscription.id, (current) => ({
      cursor: after,
      ...(current.drafts === undefined ? {} : { drafts: current.drafts }),
    }));
    if (status === undefined) throw new ApiError(404, `Webhook with id '${subscription.id}' does not exist.`);
    events.deliverer.poke(subscription.org, subscription.id);
    await send(ctx, presentSubscription(subscription, status));
  });
}
