/**
 * Webhook subscriptions and what has been delivered to them, kept in the data directory beside
 * keys.yaml, never in a model repository: `<data>/webhooks/<org>/<id>/` holds
 *
 *   subscription.json   url, event types, the `whsec_` secret (mode 0600: it signs deliveries)
 *   state.json          the last commit delivered (the cursor), the retry under way, disabled
 *   deliveries.jsonl    the delivery log, one attempt a line (the newest kept)
 *   lease               which process delivers now (./lease.ts)
 *
 * Every file is replaced whole by rename, so a kill -9 leaves the old state or the new one;
 * the cursor moves only after a receiver answered 2xx, so nothing is lost, and since one
 * subscription's events go out one at a time in commit order, nothing is reordered.
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { isCode, replaceFile, syncDirectory } from '../store/durable-files.js';
import { withDirectoryLock } from '../store/lock.js';
import { SLUG_PATTERN } from '../store/org-identity.js';
import type { DraftStates } from './draft-notices.js';

export const EVENT_TYPES = ['model.changed', 'draft.opened', 'draft.updated', 'draft.merged', 'draft.closed'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface Subscription {
  id: string;
  org: string;
  /** The organization's identity when it was made: one removed and made again does not inherit it. */
  orgId?: string;
  url: string;
  events: EventType[];
  /** `whsec_<base64>`: the Standard Webhooks signing secret. */
  secret: string;
  created: string;
}

export interface SubscriptionState {
  /** The last commit delivered (at creation: the tip of main then; after a replay: its `after`). */
  cursor: string;
  /** A failed event waiting for its next attempt (`commit`: the change's id, or a draft event's key). */
  retry?: { commit: string; attempts: number; next: number };
  /** The draft refs as far as their events were delivered (draft-notices.ts); absent: not yet looked. */
  drafts?: DraftStates;
  disabled?: { at: string; reason: string };
}

export interface Delivery {
  id: string;
  /** The `webhook-id` header: the same on every attempt of one event. */
  webhookId: string;
  commit: string;
  attempt: number;
  at: string;
  /** The receiver's HTTP status; null when none came (refused, timed out, address not allowed). */
  status: number | null;
  outcome: 'delivered' | 'retrying' | 'failed' | 'disabled';
  error?: string;
  ms: number;
}

const ID_PATTERN = /^wh_[0-9a-f]{16}$/;
/**
 * Subscriptions an organization may have (GitHub's limit per repository and event, too): the
 * deliverer gives each of them a request slot of its own (deliverer.ts), so that a dead receiver
 * delays only its own subscription.
 */
export const MAX_WEBHOOKS_PER_ORG = 20;

/**
 * A subscription whose file cannot be parsed (cut by a disk fault, edited by hand): named, so
 * that it stays its own problem. The others are listed and delivered; it can still be removed.
 */
export class DamagedWebhook extends Error {
  constructor(
    readonly org: string,
    readonly id: string,
    file: string,
    cause: Error,
  ) {
    super(
      `Webhook ${id} of '${org}': its ${file} cannot be read (${cause.message.split('\n')[0]}); repair the file, or remove the webhook.`,
    );
  }
}

export class TooManyWebhooks extends Error {
  constructor() {
    super(`An organization may have at most ${MAX_WEBHOOKS_PER_ORG} webhooks: delete one first.`);
  }
}
/** The delivery log keeps the newest this many lines (rewritten when twice as many). */
const KEPT_DELIVERIES = 500;

export function isSubscriptionId(id: string): boolean {
  return ID_PATTERN.test(id);
}

export function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/**
 * Whether a subscription is of the organization of identity `orgId`: not of an earlier one
 * removed and made again under its slug. One made before identities, or an organization of none, is.
 */
export function ofIdentity(subscription: Subscription, orgId: string | undefined): boolean {
  return orgId === undefined || subscription.orgId === undefined || subscription.orgId === orgId;
}

/** Taken while a subscription is counted and made (withDirectoryLock, in the organization's folder). */
const CREATE_LOCK_NAME = 'create.lock';

export class WebhookStore {
  readonly root: string;

  constructor(
    dataDir: string,
    private readonly durable = false,
  ) {
    this.root = path.join(path.resolve(dataDir), 'webhooks');
  }

  dirOf(org: string, id: string): string {
    if (!SLUG_PATTERN.test(org) || !isSubscriptionId(id)) throw new Error(`Invalid webhook ${org}/${id}`);
    return path.join(this.root, org, id);
  }

  async create(input: Omit<Subscription, 'id' | 'secret' | 'created'>, cursor: string, drafts?: DraftStates): Promise<Subscription> {
    const folder = path.join(this.root, input.org);
    if (!SLUG_PATTERN.test(input.org)) throw new Error(`Invalid organization ${input.org}`);
    await fsp.mkdir(folder, { recursive: true, mode: 0o700 });
    // Counted and made under the folder's lock: requests side by side, in any process, cannot
    // each count 19 and make the 20th.
    return withDirectoryLock(folder, () => this.createCounted(input, cursor, drafts), CREATE_LOCK_NAME);
  }

  private async createCounted(
    input: Omit<Subscription, 'id' | 'secret' | 'created'>,
    cursor: string,
    drafts: DraftStates | undefined,
  ): Promise<Subscription> {
    if ((await this.countOf(input.org, input.orgId)) >= MAX_WEBHOOKS_PER_ORG) throw new TooManyWebhooks();
    const subscription: Subscription = {
      id: `wh_${randomBytes(8).toString('hex')}`,
      org: input.org,
      ...(input.orgId === undefined ? {} : { orgId: input.orgId }),
      url: input.url,
      events: input.events,
      secret: newSecret(),
      created: new Date().toISOString(),
    };
    const dir = this.dirOf(subscription.org, subscription.id);
    await fsp.mkdir(path.dirname(dir), { recursive: true, mode: 0o700 });
    // Made in a temporary directory and renamed: a deliverer never finds one half-made.
    const staging = `${dir}.new`;
    await fsp.mkdir(staging, { mode: 0o700 });
    await this.writeJson(path.join(staging, 'state.json'), {
      cursor,
      ...(drafts === undefined ? {} : { drafts }),
    } satisfies SubscriptionState);
    await this.writeJson(path.join(staging, 'subscription.json'), subscription);
    await fsp.rename(staging, dir);
    if (this.durable) await syncDirectory(path.dirname(dir));
    return subscription;
  }

  /**
   * The organization's subscriptions (of its identity `orgId`, when given), oldest first; a
   * damaged one is left out and told to `damaged` (by default, the process's standard error).
   */
  async list(
    org: string,
    orgId?: string,
    damaged: (error: DamagedWebhook) => void = (error) => console.error(`c4store: webhooks: ${error.message}`),
  ): Promise<Subscription[]> {
    if (!SLUG_PATTERN.test(org)) return [];
    const found: Subscription[] = [];
    for (const name of await this.folderIds(org)) {
      let subscription: Subscription | undefined;
      try {
        subscription = await this.get(org, name);
      } catch (error) {
        if (!(error instanceof DamagedWebhook)) throw error;
        damaged(error);
        continue;
      }
      if (subscription && ofIdentity(subscription, orgId)) {
        found.push(subscription);
      }
    }
    return found.sort((a, b) => a.created.localeCompare(b.created) || a.id.localeCompare(b.id));
  }

  /**
   * What a list of the organization's webhooks shows, the API's and `c4store webhook list` alike:
   * each readable subscription with its state, oldest first, then each damaged one by id (its
   * subscription or its state unreadable), kept in view so that it can be seen and removed.
   */
  async overview(
    org: string,
    orgId: string | undefined,
  ): Promise<{ subscriptions: Array<{ subscription: Subscription; state: SubscriptionState }>; damaged: DamagedWebhook[] }> {
    const damaged: DamagedWebhook[] = [];
    const subscriptions: Array<{ subscription: Subscription; state: SubscriptionState }> = [];
    for (const subscription of await this.list(org, orgId, (error) => damaged.push(error))) {
      try {
        const state = await this.state(org, subscription.id);
        // Removed since it was listed: not shown.
        if (state !== undefined) subscriptions.push({ subscription, state });
      } catch (error) {
        if (!(error instanceof DamagedWebhook)) throw error;
        damaged.push(error);
      }
    }
    return { subscriptions, damaged: damaged.sort((a, b) => a.id.localeCompare(b.id)) };
  }

  /**
   * The subscriptions that hold a place: every one of the organization `orgId`, and a damaged one
   * too (it holds its place until removed); not those of an earlier organization of the slug,
   * which no key of this one sees or removes.
   */
  private async countOf(org: string, orgId: string | undefined): Promise<number> {
    let count = 0;
    for (const id of await this.folderIds(org)) {
      const subscription = await this.get(org, id).catch((error: unknown) => {
        if (error instanceof DamagedWebhook) return undefined;
        throw error;
      });
      if (subscription === undefined || ofIdentity(subscription, orgId)) count++;
    }
    return count;
  }

  /** The ids of the organization's subscription folders, readable or not. */
  private async folderIds(org: string): Promise<string[]> {
    return (await fsp.readdir(path.join(this.root, org)).catch(() => [] as string[])).filter(isSubscriptionId);
  }

  /** Organizations with a webhooks folder. */
  async orgs(): Promise<string[]> {
    const names = await fsp.readdir(this.root).catch(() => [] as string[]);
    return names.filter((name) => SLUG_PATTERN.test(name));
  }

  async get(org: string, id: string): Promise<Subscription | undefined> {
    if (!isSubscriptionId(id)) return undefined;
    const subscription = await this.readJson<Subscription>(org, id, 'subscription.json', (s) => {
      const { id: own, url, events, secret, created } = s as Partial<Subscription>;
      return (
        own === id &&
        typeof url === 'string' &&
        Array.isArray(events) &&
        events.every((e) => typeof e === 'string') &&
        typeof secret === 'string' &&
        typeof created === 'string'
      );
    });
    // A folder is made whole and renamed into place, and renamed away whole: one without its
    // subscription lost it to damage (or a hand). It is damaged, not absent, so that it is listed
    // and can be removed, as it holds a place toward the limit until it is.
    if (subscription === undefined && (await exists(this.dirOf(org, id)))) {
      throw new DamagedWebhook(org, id, 'subscription.json', new Error('it is missing'));
    }
    return subscription;
  }

  /** Removes the subscription, a damaged one too (that is how it is put right). */
  async remove(org: string, id: string): Promise<boolean> {
    if (!isSubscriptionId(id) || !SLUG_PATTERN.test(org)) return false;
    const dir = this.dirOf(org, id);
    // The folder, whatever of it is left: a damaged one is removed too.
    if (!(await exists(dir))) return false;
    // Renamed away first: a deliverer reading it now finds it gone, not half-removed.
    const gone = `${dir}.removed-${randomBytes(4).toString('hex')}`;
    await fsp.rename(dir, gone);
    await fsp.rm(gone, { recursive: true, force: true });
    return true;
  }

  async state(org: string, id: string): Promise<SubscriptionState | undefined> {
    // Not a subscription's id (`foo`, `create.lock`): there is none, as get() says.
    if (!isSubscriptionId(id)) return undefined;
    return this.readJson<SubscriptionState>(org, id, 'state.json', (s) => typeof (s as Partial<SubscriptionState>).cursor === 'string');
  }

  /**
   * Changes the state under the subscription's lock (across processes); `change` answers the
   * new state, or undefined to leave it. Undefined when the subscription is gone.
   */
  async updateState(
    org: string,
    id: string,
    change: (state: SubscriptionState) => SubscriptionState | undefined,
  ): Promise<SubscriptionState | undefined> {
    const dir = this.dirOf(org, id);
    try {
      return await withDirectoryLock(
        dir,
        async () => {
          const state = await this.state(org, id);
          if (state === undefined) return undefined;
          const next = change(state);
          if (next === undefined) return state;
          await this.writeJson(path.join(dir, 'state.json'), next);
          return next;
        },
        'state.lock',
      );
    } catch (error) {
      if (isCode(error, 'ENOENT')) return undefined;
      throw error;
    }
  }

  async appendDelivery(org: string, id: string, delivery: Delivery): Promise<void> {
    const file = path.join(this.dirOf(org, id), 'deliveries.jsonl');
    try {
      // After a line cut short (a kill -9 mid-append, a disk fault) the new one starts on a line of its own.
      const after = (await endsMidLine(file)) ? '\n' : '';
      await fsp.appendFile(file, `${after}${JSON.stringify(delivery)}\n`, { mode: 0o600 });
      const { size } = await fsp.stat(file);
      // About 300 bytes a line: past twice the kept number, the newest are kept.
      if (size > KEPT_DELIVERIES * 2 * 300) {
        const lines = (await fsp.readFile(file, 'utf8')).split('\n').filter(Boolean);
        await this.writeText(file, `${lines.slice(-KEPT_DELIVERIES).join('\n')}\n`);
      }
    } catch (error) {
      if (!isCode(error, 'ENOENT')) throw error;
    }
  }

  /** The newest deliveries first. */
  async deliveries(org: string, id: string, limit = 100): Promise<Delivery[]> {
    const text = await fsp.readFile(path.join(this.dirOf(org, id), 'deliveries.jsonl'), 'utf8').catch(() => '');
    const found: Delivery[] = [];
    for (const line of text.split('\n').reverse()) {
      if (found.length >= limit) break;
      try {
        if (line !== '') found.push(JSON.parse(line) as Delivery);
      } catch {
        // A line cut by a kill -9 mid-append: the attempt is simply not listed.
      }
    }
    return found;
  }

  /** `shaped`: whether the parsed object is what this file holds (JSON of another shape is damage too). */
  private async readJson<T>(org: string, id: string, name: string, shaped: (value: object) => boolean): Promise<T | undefined> {
    let text: string;
    try {
      text = await fsp.readFile(path.join(this.dirOf(org, id), name), 'utf8');
    } catch (error) {
      if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR')) return undefined;
      throw error;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new DamagedWebhook(org, id, name, error as Error);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !shaped(value)) {
      throw new DamagedWebhook(org, id, name, new Error('it does not hold what the file is for'));
    }
    return value as T;
  }

  private writeJson(file: string, value: unknown): Promise<void> {
    return this.writeText(file, `${JSON.stringify(value, null, 2)}\n`);
  }

  /** Whole or not at all (0600); durable: the delivered position survives a power cut as well as the commits it names. */
  private writeText(file: string, text: string): Promise<void> {
    return replaceFile(file, text, { mode: 0o600, durable: this.durable });
  }
}

async function exists(file: string): Promise<boolean> {
  return fsp.stat(file).then(
    () => true,
    () => false,
  );
}

/** Whether the file's last character is not a line break (false for an empty or missing file). */
async function endsMidLine(file: string): Promise<boolean> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(file, 'r');
  } catch (error) {
    if (isCode(error, 'ENOENT')) return false;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    if (size === 0) return false;
    const last = Buffer.alloc(1);
    await handle.read(last, 0, 1, size - 1);
    return last[0] !== 0x0a;
  } finally {
    await handle.close();
  }
}
