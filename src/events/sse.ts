/**
 * Server-Sent Events (CONTRACT.md §9, the WHATWG HTML "server-sent events" format): one event
 * per change, `id:` its commit so that a browser's EventSource reconnects with `Last-Event-ID`
 * and is sent everything after it first, then what happens live. The API and the viewer (with
 * its session) use the same stream.
 */
import type { Context } from 'koa';
import { ApiError } from '../errors.js';
import type { DraftNotice } from './draft-notices.js';
import { NotOnBranchError } from '../store/branches.js';
import type { FeedEvent } from './feed.js';
import { isChange, type OrgEvents, type StreamEvent } from './hub.js';
import { endWhenStopping } from '../ops/drain.js';

export interface StreamSettings {
  /** A comment line at least this often, so proxies and clients know the stream is alive (ms). */
  heartbeatMs: number;
  /**
   * Bytes a client may leave unread before it is cut off; it reconnects with Last-Event-ID and
   * misses nothing, while a stalled client never holds the server's memory.
   */
  maxUnreadBytes: number;
}

export const DEFAULT_STREAM_SETTINGS: StreamSettings = { heartbeatMs: 20_000, maxUnreadBytes: 1024 * 1024 };

const REPLAY_PAGE = 100;
/** What an EventSource waits before reconnecting (ms). */
const RETRY_MS = 2000;

/** One frame per event, built once however many clients are sent it. */
const frames = new WeakMap<FeedEvent, string>();

export function changeFrame(event: FeedEvent): string {
  let frame = frames.get(event);
  if (frame === undefined) {
    frame = `id: ${event.change.id}\nevent: change\ndata: ${JSON.stringify(event.change)}\n\n`;
    frames.set(event, frame);
  }
  return frame;
}

/**
 * A draft event, with `id:` the commit of main the client stands at (the last change it was
 * sent, or where its stream began): an EventSource that reconnects after it is sent every change
 * of main it missed. Draft events themselves are live only: git keeps no record of a draft's
 * openings and closings to replay them from (the list of drafts tells where each stands).
 */
export function draftFrame(notice: DraftNotice, mainAt: string | null): string {
  return `${mainAt === null ? '' : `id: ${mainAt}\n`}event: ${notice.type}\ndata: ${JSON.stringify(notice.data)}\n\n`;
}

/** Where a client resumes: its `Last-Event-ID` (a reconnect), else `?after=` (a first connect). */
export function resumeFrom(ctx: Context): string | undefined {
  const header = ctx.get('last-event-id').trim();
  if (header !== '') return header;
  const after = ctx.query.after;
  if (Array.isArray(after)) throw new ApiError(400, "Query parameter 'after' is given more than once.");
  // An empty one names no commit (404, as in the feed), never "from now": a client whose resume
  // point came out empty would otherwise miss every change since it last read, unsaid.
  return after;
}

/**
 * Answers the request with the organization's change stream until the client goes. A resume
 * point not on `main` is refused with 404 before the stream starts (an EventSource then stops).
 */
export async function streamChanges(
  ctx: Context,
  events: OrgEvents,
  after: string | undefined,
  settings: StreamSettings,
  /** Whether what opened the stream (a key, a session) still opens this organization: asked at each heartbeat. */
  stillAllowed: () => Promise<boolean>,
): Promise<void> {
  if (after !== undefined) {
    await events.feed.sync();
    if (events.feed.positionOf(after) === undefined) throw new ApiError(404, new NotOnBranchError(after, events.feed.ref).message);
  }
  const res = ctx.res;
  if (ctx.method === 'HEAD') {
    ctx.type = 'text/event-stream; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 200;
    return;
  }

  let closed = false;
  // Frames the socket has not taken yet. It takes the next whenever it has room, however large
  // (a commit of thousands of resources is one event of megabytes), so the server holds one
  // frame of a client's in its own buffer, and references to the frames waiting (shared by every
  // client). A client is cut off when more than maxUnreadBytes of frames wait behind the one it
  // is reading and the next: one that reads is never cut off for the size of what it is sent;
  // one that stopped reading reconnects with Last-Event-ID and misses nothing.
  const outbox: string[] = [];
  let waiting = 0;
  const cutOff = () => {
    closed = true;
    res.destroy();
  };
  const pump = () => {
    while (!closed && outbox.length > 0 && !res.writableNeedDrain) {
      const frame = outbox.shift()!;
      waiting -= frame.length;
      res.write(frame);
    }
  };
  res.on('drain', pump);
  const send = (text: string) => {
    if (closed) return;
    outbox.push(text);
    waiting += text.length;
    if (waiting - outbox[0]!.length > settings.maxUnreadBytes) cutOff();
    else pump();
  };
  // Live events queue here while the replay is written; both are sent in commit order once. A
  // client that reads none of its replay is cut off once they come to more than the bound.
  let queued: StreamEvent[] | undefined = [];
  let queuedBytes = 0;
  // Without a resume point every change announced from now on is new to this client. Live
  // events that come while the replay is sent may repeat some of it: those are left out. Once
  // live, each change is told once, so a position not beyond the last one sent means the branch
  // was rewritten (a draft force-pushed): its new commits are sent.
  let replaying = true;
  let sentUpTo = after === undefined ? -1 : events.feed.positionOf(after)!;
  // The commit of main the client stands at, which a draft frame carries as its id.
  let standsAt: string | null = after ?? null;
  const sendEvent = (event: StreamEvent) => {
    if (!isChange(event)) {
      send(draftFrame(event, standsAt));
      return;
    }
    if (replaying && event.position <= sentUpTo) return;
    sentUpTo = event.position;
    standsAt = event.change.id;
    send(changeFrame(event));
  };
  const sendEvents = (list: readonly StreamEvent[]) => {
    for (const event of list) sendEvent(event);
  };
  const done = new Promise<void>((resolve) => res.once('close', resolve));
  // A stopping server ends the stream (the client resumes with Last-Event-ID, elsewhere). One
  // whose client has not taken all it was sent could not end before the client reads it, which
  // a stalled client never does: it is cut, and its client gets the event it lacked on resuming.
  endWhenStopping(res, () => {
    if (closed) return;
    closed = true;
    if (res.writableLength > 0 || outbox.length > 0) res.destroy();
    else res.end();
  });
  // The replay goes at the client's pace: each event waits until what was sent before it is taken.
  const readByClient = async () => {
    while (!closed && (outbox.length > 0 || res.writableNeedDrain)) {
      await Promise.race([done, new Promise((resolve) => res.once('drain', resolve))]);
    }
  };
  const listening = await events.listen((list) => {
    if (!queued) return sendEvents(list);
    queued.push(...list);
    for (const event of list) queuedBytes += isChange(event) ? changeFrame(event).length : 0;
    if (queuedBytes > settings.maxUnreadBytes) cutOff();
  });
  const unlisten = listening.stop;
  standsAt ??= listening.from;
  // Headers go out once the listener is in place: a client that saw them open misses nothing after.
  ctx.respond = false;
  ctx.status = 200;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  ctx.req.socket.setNoDelay(true);
  // Only while nothing waits unread: a client still reading a large event is alive, and a
  // keep-alive must never count against the bound of a client that reads slowly.
  // A key revoked, a session ended or the organization made anew under its slug ends the stream
  // at the next heartbeat: a request with it is refused at once, a stream open with it ends too.
  const heartbeat = setInterval(() => {
    if (closed) return;
    void stillAllowed().then(
      (allowed) => {
        if (closed) return;
        if (!allowed) {
          closed = true;
          res.end();
        } else if (outbox.length === 0 && res.writableLength === 0) res.write(': keep-alive\n\n');
      },
      () => {}, // a keys file being replaced: the next heartbeat asks again
    );
  }, settings.heartbeatMs);
  // A stream's heartbeat never keeps the process alive by itself (a server closed in a test, or embedded).
  heartbeat.unref();
  void done.then(() => {
    closed = true;
    clearInterval(heartbeat);
    unlisten();
  });
  send(`retry: ${RETRY_MS}\n: c4store changes\n\n`);
  try {
    if (after !== undefined) {
      let cursor = after;
      for (;;) {
        if (closed) break;
        const page = await events.feed.page(cursor, REPLAY_PAGE);
        for (const event of page.events) {
          await readByClient();
          if (closed) break;
          sendEvent(event);
        }
        if (!page.more || page.events.length === 0) break;
        cursor = page.events.at(-1)!.change.id;
      }
    }
  } catch (error) {
    res.destroy(error as Error);
  }
  // What happened meanwhile, at the client's pace too; then live.
  const pending = queued;
  while (pending.length > 0 && !closed) {
    await readByClient();
    if (closed) break;
    const event = pending.shift()!;
    queuedBytes -= isChange(event) ? changeFrame(event).length : 0;
    sendEvent(event);
  }
  queued = undefined;
  replaying = false;
  await done;
}
