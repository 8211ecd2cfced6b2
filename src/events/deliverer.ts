/**
 * Delivers webhooks (Standard Webhooks): each subscription's changes in commit order, one at a
 * time, by whichever process holds the subscription's lease (./lease.ts). The next event is
 * always the one after the stored cursor (./webhook-store.ts), which moves only after a 2xx:
 * a kill -9 or a restart resumes exactly where delivery stood. Failures are retried on a
 * jittered schedule of about 28 hours; a 410 disables the subscription.
 *
 * Deliveries run beside the request path: a write only pokes the workers (through the event
 * hub), never waits for one; requests go out a bounded number at a time, per process and per
 * organization, and each worker holds at most a small page of events.
 */
import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Orgs } from '../service/orgs.js';
import { type DraftNotice, draftNotices, MERGE_TITLE_PREFIX, mergeUnknown, noticesBeforeMerge } from './draft-notices.js';
import type { FeedEvent } from './feed.js';
import { NotOnBranchError } from '../store/branches.js';
import type { EventHub, OrgEvents } from './hub.js';
import { DEFAULT_LEASE_STALE_MS, Lease } from './lease.js';
import { guardedLookup, isPrivateAddress } from './targets.js';
import {
  DamagedWebhook,
  type Delivery,
  MAX_WEBHOOKS_PER_ORG,
  ofIdentity,
  type Subscription,
  type SubscriptionState,
  type WebhookStore,
} from './webhook-store.js';

export interface DelivererSettings {
  /** Allow receivers on private and loopback addresses (`serve --webhook-allow-private`). */
  allowPrivate: boolean;
  /** The waits before the 2nd, 3rd, … attempt of one event (ms); after the last, the subscription is disabled. */
  retryDelaysMs: readonly number[];
  /** A receiver that has not answered within this long has failed (ms). */
  timeoutMs: number;
  /** How often subscriptions without a live deliverer are looked for (ms). */
  scanMs: number;
  /** A lease not renewed for this long is taken over (ms). */
  leaseStaleMs: number;
  /** Requests in flight at once, per process and per organization. */
  maxConcurrent: number;
  maxConcurrentPerOrg: number;
}

/** Standard Webhooks' own schedule after the first attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (≈ 28 h in all). */
export const DEFAULT_RETRY_DELAYS_MS = [5e3, 3e5, 18e5, 72e5, 18e6, 36e6, 36e6];

export const DEFAULT_DELIVERER_SETTINGS: DelivererSettings = {
  allowPrivate: false,
  retryDelaysMs: DEFAULT_RETRY_DELAYS_MS,
  timeoutMs: 15_000,
  scanMs: 2_000,
  leaseStaleMs: DEFAULT_LEASE_STALE_MS,
  // A request waiting for its receiver's answer holds a socket and a timer, little else: enough
  // slots that each subscription of an organization has one (a dead receiver then delays only
  // its own subscription), and many organizations' at once.
  maxConcurrent: 256,
  maxConcurrentPerOrg: MAX_WEBHOOKS_PER_ORG,
};

/** Events a worker reads ahead from the feed. */
const READ_AHEAD = 20;
/** A receiver's answer is read up to this many bytes, then dropped. */
const MAX_ANSWER_BYTES = 64 * 1024;

export function webhookIdOf(subscription: Pick<Subscription, 'id'>, commit: string): string {
  return `msg_${commit}_${subscription.id.slice(3)}`;
}

export function payloadOf(event: FeedEvent | DraftNotice): string {
  if ('change' in event) return JSON.stringify({ type: 'model.changed', timestamp: event.change.time, data: event.change });
  return JSON.stringify({ type: event.type, timestamp: event.data.time, data: event.data });
}

/** A draft event's `webhook-id`: from its key (draft, states before and after), so the same on every retry. */
export function draftWebhookIdOf(subscription: Pick<Subscription, 'id'>, notice: DraftNotice): string {
  return `msg_draft_${createHash('sha256').update(notice.key).digest('hex').slice(0, 32)}_${subscription.id.slice(3)}`;
}

/** One event on its way: what is sent, and what delivering it moves in the subscription's state. */
interface Outgoing {
  /** What `retry.commit` names while it is retried: the change's commit, or the draft event's key. */
  key: string;
  commit: string;
  webhookId: string;
  body: string;
  advance: (read: SubscriptionState) => Promise<void>;
  /** Of a type the subscription asked for; if not, it is passed over (its state moved on, nothing sent). */
  wanted: boolean;
}

/** Counting semaphore: at most `size` at once, the rest wait in order. */
class Slots {
  private used = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {}

  async take(): Promise<() => void> {
    if (this.used >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.used++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.used--;
    };
  }
}

export class Deliverer {
  private readonly settings: DelivererSettings;
  private readonly workers = new Map<string, Worker>();
  private readonly slots: Slots;
  private readonly orgSlots = new Map<string, Slots>();
  private timer: NodeJS.Timeout | undefined;
  private scanning: Promise<void> | undefined;
  private closed = false;
  /** Cuts the requests in flight when the server stops: their events stay undelivered, to be sent again. */
  readonly stopping = new AbortController();

  constructor(
    readonly store: WebhookStore,
    private readonly hub: EventHub,
    private readonly orgs: Orgs,
    settings: Partial<DelivererSettings> = {},
  ) {
    this.settings = { ...DEFAULT_DELIVERER_SETTINGS, ...settings };
    this.slots = new Slots(this.settings.maxConcurrent);
    // Every POST in flight listens to it: more than Node's 10 would be reported as a leak.
    setMaxListeners(0, this.stopping.signal);
  }

  get allowPrivate(): boolean {
    return this.settings.allowPrivate;
  }

  start(): void {
    this.timer = setInterval(() => this.scan(), this.settings.scanMs);
    this.timer.unref();
    this.scan();
  }

  /** Looks for subscriptions to deliver now (after one was made or replayed here). */
  scan(): void {
    if (this.closed || this.scanning !== undefined) return;
    this.scanning = this.takeFree()
      .catch((error: Error) => console.error(`c4store: webhooks: ${error.message}`))
      .finally(() => {
        this.scanning = undefined;
      });
  }

  /** Pokes the worker of a subscription (a replay or a removal made through this process). */
  poke(org: string, id: string): void {
    this.workers.get(`${org}/${id}`)?.poke();
    this.scan();
  }

  private async takeFree(): Promise<void> {
    for (const slug of await this.store.orgs()) {
      const org = this.orgs.find(slug);
      if (org === undefined) continue;
      for (const subscription of await this.store.list(slug, org.identity)) {
        const key = `${slug}/${subscription.id}`;
        if (this.closed || this.workers.has(key)) continue;
        // A damaged subscription waits for its repair, named in the log; the others go on.
        const state = await this.store.state(slug, subscription.id).catch((error: unknown) => {
          if (!(error instanceof DamagedWebhook)) throw error;
          console.error(`c4store: webhooks: ${error.message}`);
          return undefined;
        });
        if (state === undefined || state.disabled) continue;
        const lease = await Lease.acquire(this.store.dirOf(slug, subscription.id), { staleMs: this.settings.leaseStaleMs });
        if (lease === undefined) continue;
        const worker = new Worker(this, subscription, lease, this.hub.of(slug, org.repo), this.settings);
        this.workers.set(key, worker);
        void worker.run().finally(() => this.workers.delete(key));
      }
    }
  }

  /** A slot of the process and of the organization, for one request. */
  async slot(org: string): Promise<() => void> {
    let perOrg = this.orgSlots.get(org);
    if (!perOrg) this.orgSlots.set(org, (perOrg = new Slots(this.settings.maxConcurrentPerOrg)));
    const releaseOrg = await perOrg.take();
    const release = await this.slots.take();
    return () => {
      release();
      releaseOrg();
    };
  }

  /**
   * Starts nothing more. `finish`: deliveries in flight get their answers and are recorded
   * (a server stopping gracefully: another instance taking the lease then goes on after them,
   * rather than sending the same event again while the receiver still handles it); otherwise
   * they are cut off (abort()), undelivered, to be sent again by the next holder.
   */
  async close(options: { finish?: boolean } = {}): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    if (!options.finish) this.abort();
    await this.scanning;
    await Promise.all([...this.workers.values()].map((worker) => worker.stop()));
  }

  /** Whether the subscription is of the organization now under its slug (not of one removed since). */
  serves(subscription: Subscription): boolean {
    const org = this.orgs.find(subscription.org);
    return org !== undefined && ofIdentity(subscription, org.identity);
  }

  /** Cuts the deliveries in flight. */
  abort(): void {
    this.stopping.abort();
  }
}

/** Delivers one subscription's events while this process holds its lease. */
class Worker {
  private stopped = false;
  private wake: (() => void) | undefined;
  private ahead: FeedEvent[] = [];
  private running: Promise<void> | undefined;
  private readonly signer: Webhook;

  constructor(
    private readonly deliverer: Deliverer,
    private readonly subscription: Subscription,
    private readonly lease: Lease,
    private readonly events: OrgEvents,
    private readonly settings: DelivererSettings,
  ) {
    this.signer = new Webhook(subscription.secret);
  }

  poke(): void {
    this.wake?.();
  }

  run(): Promise<void> {
    this.running ??= this.loop();
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.poke();
    await this.running;
  }

  private get store(): WebhookStore {
    return this.deliverer.store;
  }

  private async loop(): Promise<void> {
    const { org, id } = this.subscription;
    let unlisten = () => {};
    try {
      // Inside the try: a feed that cannot be read ends this worker (logged), never the process.
      ({ stop: unlisten } = await this.events.listen(() => this.poke()));
      while (!this.stopped && (await this.lease.renew())) {
        const state = await this.store.state(org, id);
        if (state === undefined || state.disabled || (await this.store.get(org, id)) === undefined) break;
        // The organization was removed and made again under its slug: this subscription was the old one's.
        if (!this.deliverer.serves(this.subscription)) break;
        let next: FeedEvent | undefined;
        try {
          next = await this.nextAfter(state.cursor);
        } catch (error) {
          if (!(error instanceof NotOnBranchError)) throw error;
          // Its cursor left main (an older backup restored, history rewritten by hand): nothing
          // can follow it. Disabled, saying so, where an operator looks; a replay names where to go on.
          // (Read again first: a cursor just set by another process may be newer than a read in flight.)
          await this.events.feed.sync();
          if (this.events.feed.positionOf(state.cursor) !== undefined) continue;
          const reason = `Its last delivered commit ${state.cursor} is no longer on main (history restored or rewritten): replay from a commit of main.`;
          await this.store.updateState(org, id, (current) =>
            current.cursor !== state.cursor || current.disabled
              ? undefined
              : { ...current, disabled: { at: new Date().toISOString(), reason } },
          );
          continue;
        }
        const outgoing =
          next === undefined
            ? await this.nextDraftEvent(state)
            : ((await this.draftEventBeforeMerge(state, next)) ?? this.changeOutgoing(next));
        if (outgoing === undefined) {
          await this.sleep(this.settings.leaseStaleMs / 3);
          continue;
        }
        if (!outgoing.wanted) {
          await outgoing.advance(state);
          continue;
        }
        const retry = state.retry?.commit === outgoing.key ? state.retry : undefined;
        if (retry && retry.next > Date.now()) {
          await this.sleep(Math.min(retry.next - Date.now(), this.settings.leaseStaleMs / 3));
          continue;
        }
        await this.deliver(state, outgoing, (retry?.attempts ?? 0) + 1);
      }
    } catch (error) {
      console.error(`c4store: webhook ${org}/${id}: ${(error as Error).message}`);
    } finally {
      unlisten();
      await this.lease.release().catch(() => {});
    }
  }

  private changeOutgoing(event: FeedEvent): Outgoing {
    return {
      key: event.change.id,
      commit: event.change.id,
      webhookId: webhookIdOf(this.subscription, event.change.id),
      body: payloadOf(event),
      advance: (read) => this.advance(read, event.change.id),
      wanted: this.subscription.events.includes('model.changed'),
    };
  }

  /**
   * Once every change of main is delivered: the next draft event, from the draft refs against
   * those delivered so far. A `draft.merged` waits for its merge commit's change to go first.
   */
  private async nextDraftEvent(read: SubscriptionState): Promise<Outgoing | undefined> {
    const { org, id } = this.subscription;
    const look = await this.events.draftStates();
    const { states, mergeCommits } = look;
    if (read.drafts === undefined) {
      await this.store.updateState(org, id, (state) => (state.drafts === undefined ? { ...state, drafts: states } : undefined));
      return undefined;
    }
    const notices = draftNotices(read.drafts, states, mergeCommits);
    if (notices.length === 0) {
      if (JSON.stringify(read.drafts) !== JSON.stringify(states)) await this.moveDrafts(read, () => states);
      return undefined;
    }
    // A merge told only once the records are repaired holds back that draft, not the others.
    const waiting = new Set(notices.filter((each) => mergeUnknown(each, look)).map(({ data }) => data.name));
    const notice = notices.find(({ data }) => !waiting.has(data.name));
    if (notice === undefined) return undefined;
    if (notice.type === 'draft.merged' && mergeCommits.has(notice.data.name)) {
      await this.events.feed.sync();
      const merged = this.events.feed.positionOf(notice.data.commit);
      const delivered = this.events.feed.positionOf(read.cursor);
      if (merged === undefined || delivered === undefined || merged > delivered) return undefined;
    }
    return this.draftOutgoing(notice);
  }

  /**
   * When the next change is a draft's merge commit: that draft's opening or update not delivered
   * yet, which happened before it (a draft opened and merged between two looks at the refs).
   */
  private async draftEventBeforeMerge(read: SubscriptionState, next: FeedEvent): Promise<Outgoing | undefined> {
    if (read.drafts === undefined || !next.change.title.startsWith(MERGE_TITLE_PREFIX)) return undefined;
    const { states, mergeCommits } = await this.events.draftStates();
    const [notice] = noticesBeforeMerge(read.drafts, states, mergeCommits, next.change);
    return notice === undefined ? undefined : this.draftOutgoing(notice);
  }

  private draftOutgoing(notice: DraftNotice): Outgoing {
    const advance = (state: SubscriptionState) =>
      this.moveDrafts(state, (drafts) => {
        const next = { ...drafts };
        if (notice.leadsTo === null) delete next[notice.data.name];
        else next[notice.data.name] = notice.leadsTo;
        return next;
      });
    return {
      key: notice.key,
      commit: notice.data.commit,
      webhookId: draftWebhookIdOf(this.subscription, notice),
      body: payloadOf(notice),
      advance,
      wanted: this.subscription.events.includes(notice.type),
    };
  }

  /** Moves the delivered drafts on, unless a replay or another delivery moved the state meanwhile. */
  private async moveDrafts(
    read: SubscriptionState,
    change: (drafts: NonNullable<SubscriptionState['drafts']>) => SubscriptionState['drafts'],
  ) {
    const { org, id } = this.subscription;
    await this.store.updateState(org, id, (state) => {
      if (state.cursor !== read.cursor || JSON.stringify(state.drafts) !== JSON.stringify(read.drafts)) return undefined;
      const { retry: _, ...rest } = state;
      return { ...rest, drafts: change(state.drafts ?? {}) };
    });
  }

  /** The event after `cursor`, from the read-ahead when it follows on. */
  private async nextAfter(cursor: string): Promise<FeedEvent | undefined> {
    const position = this.events.feed.positionOf(cursor);
    if (this.ahead.length > 0 && position !== undefined && this.ahead[0].position === position + 1) return this.ahead[0];
    const { events } = await this.events.feed.page(cursor, READ_AHEAD);
    this.ahead = events;
    return events[0];
  }

  private async advance(read: SubscriptionState, commit: string): Promise<void> {
    this.ahead = this.ahead.filter((event) => event.change.id !== commit);
    // A replay made meanwhile (the cursor moved under us) wins over this delivery.
    await this.store.updateState(this.subscription.org, this.subscription.id, (state) =>
      state.cursor === read.cursor ? { cursor: commit, ...(state.drafts === undefined ? {} : { drafts: state.drafts }) } : undefined,
    );
  }

  private async deliver(read: SubscriptionState, event: Outgoing, attempt: number): Promise<void> {
    const { org, id, url } = this.subscription;
    const { webhookId } = event;
    const release = await this.deliverer.slot(org);
    const started = performance.now();
    let status: number | null = null;
    let error: string | undefined;
    try {
      // The lease is checked right before sending: a process that lost it sends nothing more.
      if (!(await this.lease.renew())) return;
      const body = event.body;
      const timestamp = new Date();
      status = await post(
        url,
        body,
        {
          'content-type': 'application/json',
          'user-agent': 'c4store-webhooks',
          'webhook-id': webhookId,
          'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
          'webhook-signature': this.signer.sign(webhookId, timestamp, body),
        },
        this.settings,
        this.deliverer.stopping.signal,
      );
    } catch (failure) {
      error = (failure as Error).message;
    } finally {
      release();
    }
    const delivered = status !== null && status >= 200 && status < 300;
    // Cut short by the server stopping: not the receiver's failure; the next holder sends it again.
    if (!delivered && this.deliverer.stopping.signal.aborted) return;
    const gone = status === 410;
    const exhausted = !delivered && !gone && attempt > this.settings.retryDelaysMs.length;
    const outcome: Delivery['outcome'] = delivered ? 'delivered' : gone || exhausted ? 'disabled' : 'retrying';
    if (!delivered && error === undefined) error = `The receiver answered ${status}.`;
    await this.store.appendDelivery(org, id, {
      id: `dl_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`,
      webhookId,
      commit: event.commit,
      attempt,
      at: new Date().toISOString(),
      status,
      outcome,
      ...(error === undefined ? {} : { error }),
      ms: Math.round(performance.now() - started),
    });
    if (delivered) return event.advance(read);
    await this.store.updateState(org, id, (state) => {
      if (state.cursor !== read.cursor) return undefined;
      // The attempts so far, the one that disabled it included (`pendingAttempts`).
      const retry = (wait: number) => ({ commit: event.key, attempts: attempt, next: Date.now() + wait });
      if (gone || exhausted) {
        const reason = gone
          ? `The receiver answered 410 Gone for ${event.commit}.`
          : `${attempt} attempts to deliver ${event.commit} failed.`;
        return { ...state, retry: retry(0), disabled: { at: new Date().toISOString(), reason } };
      }
      return { ...state, retry: retry(this.settings.retryDelaysMs[attempt - 1] * (0.8 + 0.4 * Math.random())) };
    });
  }

  /** Waits `ms`, or until poked (a new commit, a replay); the lease is renewed at least this often. */
  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(1, ms));
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }
}

/** One POST; resolves with the status, rejects when no answer came in time. */
function post(
  url: string,
  body: string,
  headers: Record<string, string>,
  settings: DelivererSettings,
  signal: AbortSignal,
): Promise<number> {
  const target = new URL(url);
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!settings.allowPrivate && isIP(host) && isPrivateAddress(host)) {
    return Promise.reject(new Error(`${host} is a private or loopback address (refused).`));
  }
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: guardedLookup(settings.allowPrivate),
        timeout: settings.timeoutMs,
        agent: false,
        signal,
      },
      (response) => {
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) response.destroy();
        });
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('close', () => resolve(response.statusCode ?? 0));
        response.on('error', () => resolve(response.statusCode ?? 0));
      },
    );
    const deadline = setTimeout(() => request.destroy(new Error(`No answer within ${settings.timeoutMs / 1000} s.`)), settings.timeoutMs);
    request.on('close', () => clearTimeout(deadline));
    request.on('timeout', () => request.destroy(new Error(`No answer within ${settings.timeoutMs / 1000} s.`)));
    request.on('error', reject);
    request.end(body);
  });
}
