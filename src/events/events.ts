/**
 * The room's one entry point for the server: the change feed and live events of every
 * organization (hub.ts), webhook subscriptions (webhook-store.ts) and their delivery
 * (deliverer.ts). The server tells it of its own commits; other processes' it sees itself.
 *
 * Draft events: when drafts exist, their commits are first-parent chains of their own
 * branches (`new ChangeFeed(gitdir, 'refs/heads/drafts/<name>')` gives `?draft=` its feed),
 * and `draft.opened/updated/merged/closed` are announced by the drafts room through
 * `announce()` below, which SSE streams as `event: draft.*` frames (docs/api.md §12).
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
