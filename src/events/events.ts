/**
 * The room's one entry point for the server: the change feed and live events of every
 * organization (hub.ts), webhook subscriptions (webhook-store.ts) and their delivery
 * (deliverer.ts). The server tells it of its own commits; other processes' it sees itself.
 *
 * Draft events (a seam for the drafts room): a draft is a branch, so its changes are a
 * `new ChangeFeed(repo, 'refs/heads/drafts/<name>')` (`?draft=` of /changes and /events, today
 * refused with 404 in http/routes/events.ts), and `draft.opened/updated/merged/closed` become
 * frames of the same SSE stream (`event: draft.opened`, sse.ts) and webhook payloads of those
 * types (deliverer.ts payloadOf; subscriptions already accept the types). docs/api.md §19.
 */
import type { Orgs } from '../service/orgs.js';
import { Deliverer, type DelivererSettings } from './deliverer.js';
import { EventHub } from './hub.js';
import { DEFAULT_STREAM_SETTINGS, type StreamSettings } from './sse.js';
import { WebhookStore } from './webhook-store.js';

export interface EventsSettings {
  /** How often a watched ref is read besides fs.watch (ms). */
  pollMs?: number;
  stream?: Partial<StreamSettings>;
  webhooks?: Partial<DelivererSettings>;
  durable?: boolean;
}

export class Events {
  readonly hub: EventHub;
  readonly webhooks: WebhookStore;
  readonly deliverer: Deliverer;
  readonly stream: StreamSettings;

  constructor(
    readonly orgs: Orgs,
    settings: EventsSettings = {},
  ) {
    this.hub = new EventHub({ pollMs: settings.pollMs });
    this.webhooks = new WebhookStore(orgs.dataDir, settings.durable);
    this.deliverer = new Deliverer(this.webhooks, this.hub, orgs, settings.webhooks);
    this.stream = { ...DEFAULT_STREAM_SETTINGS, ...settings.stream };
  }

  /** The organization's events (its feed and this process's listeners). */
  of(slug: string) {
    return this.hub.of(slug, this.orgs.get(slug).repo);
  }

  start(): void {
    this.deliverer.start();
  }

  /** A commit made by this process (OrgModel's afterCommit). */
  afterCommit(slug: string): void {
    this.hub.afterCommit(slug);
  }

  close(): Promise<void> {
    return this.deliverer.close();
  }
}
