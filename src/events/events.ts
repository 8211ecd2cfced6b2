/**
 * The room's one entry point for the server: the change feed and live events of every
 * organization (hub.ts), webhook subscriptions (webhook-store.ts) and their delivery
 * (deliverer.ts). The server tells it of its own commits; other processes' it sees itself.
 *
 * Drafts: a draft is a branch, so its changes are a ChangeFeed of its ref (`?draft=` of
 * /changes and /events). `draft.opened/updated/merged/closed` are read from the draft refs
 * (draft-notices.ts), whoever moved them (this process, another, a push): frames of main's SSE
 * stream (hub.ts, sse.ts) and webhook payloads (deliverer.ts). The drafts room's in-process
 * events (drafts/events.ts) only make this process look at once. docs/api.md §19.
 */
import { onDraftEvent } from '../drafts/events.js';
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
  private readonly stopDraftEvents: () => void;

  constructor(
    readonly orgs: Orgs,
    settings: EventsSettings = {},
  ) {
    this.hub = new EventHub({ pollMs: settings.pollMs });
    this.webhooks = new WebhookStore(orgs.dataDir, settings.durable);
    this.deliverer = new Deliverer(this.webhooks, this.hub, orgs, settings.webhooks);
    this.stream = { ...DEFAULT_STREAM_SETTINGS, ...settings.stream };
    this.stopDraftEvents = onDraftEvent((event) => this.hub.afterCommit(event.org));
  }

  /** The organization's events (main's feed, or a draft ref's, and this process's listeners). */
  of(slug: string, ref?: string) {
    return this.hub.of(slug, this.orgs.get(slug).repo, ref);
  }

  start(): void {
    this.deliverer.start();
  }

  /** A commit made by this process (OrgModel's afterCommit). */
  afterCommit(slug: string): void {
    this.hub.afterCommit(slug);
  }

  /** `finish`: deliveries in flight end with their answers (a graceful stop); else they are cut off. */
  close(options: { finish?: boolean } = {}): Promise<void> {
    this.stopDraftEvents();
    const delivered = this.deliverer.close(options);
    this.hub.close();
    return delivered;
  }

  /** Cuts the deliveries still in flight (a graceful stop whose time ran out). */
  abortDeliveries(): void {
    this.deliverer.abort();
  }
}
