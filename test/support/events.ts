import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventSource } from 'eventsource';

export interface ChangeEvent {
  id: string;
  type: string;
  change: { id: string; title: string; resources: Array<{ kind: string; id: string; name: string | null; action: string }> };
}

/**
 * A real EventSource (the WHATWG client, reconnecting with Last-Event-ID by itself) on an
 * organization's change stream, collecting what arrives.
 */
export class Listener {
  readonly events: ChangeEvent[] = [];
  private readonly source: EventSource;
  private waiters: Array<() => void> = [];
  opened: Promise<void>;

  constructor(url: string, headers: Record<string, string>) {
    this.source = new EventSource(url, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
    });
    this.opened = new Promise((resolve) => this.source.addEventListener('open', () => resolve(), { once: true }));
    this.source.addEventListener('change', (event) => {
      this.events.push({ id: event.lastEventId, type: event.type, change: JSON.parse(event.data) });
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /** Resolves once `count` events have arrived (fails after `ms`). */
  async until(count: number, ms = 20_000): Promise<ChangeEvent[]> {
    const deadline = Date.now() + ms;
    while (this.events.length < count) {
      if (Date.now() > deadline) throw new Error(`only ${this.events.length} of ${count} events arrived`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
    return this.events;
  }

  close(): void {
    this.source.close();
  }
}

export function listen(base: string, key: string, path = '/api/external/events', headers: Record<string, string> = {}): Listener {
  return new Listener(base + path, { authorization: `Bearer ${key}`, ...headers });
}

export interface Received {
  /** The request line's method and target (`POST`, `/hook?x=1`). */
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** What the receiver answered. */
  status: number;
}

/** A webhook receiver on 127.0.0.1: `answer` decides each status (default 204). */
export class Receiver {
  readonly received: Received[] = [];
  private waiters: Array<() => void> = [];

  private constructor(
    readonly server: Server,
    readonly url: string,
  ) {}

  static async start(answer: (n: number, body: string) => number | Promise<number> = () => 204): Promise<Receiver> {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const receiver = new Receiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
    server.on('request', async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      const status = await answer(receiver.received.length, body);
      receiver.received.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, status });
      res.writeHead(status).end();
      for (const wake of receiver.waiters.splice(0)) wake();
    });
    return receiver;
  }

  /** The bodies answered 2xx, in order of arrival. */
  get delivered(): Received[] {
    return this.received.filter((r) => r.status >= 200 && r.status < 300);
  }

  async until(test: () => boolean, ms = 30_000, what = 'deliveries'): Promise<void> {
    const deadline = Date.now() + ms;
    while (!test()) {
      if (Date.now() > deadline) throw new Error(`waited ${ms} ms for ${what}: ${this.received.length} received`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
