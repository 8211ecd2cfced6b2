/**
 * Browser sessions: a person pastes an API key once; the browser then holds only a random
 * session id in a cookie, never the key. Sessions live in this process's memory (a restart
 * signs everyone out) and end after a bounded time. The key behind a session is looked up in
 * the key store on every request, so a revoked key ends its sessions at once.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { KeyRecord, KeyStore } from '../store/keys.js';

export const SESSION_COOKIE = 'c4s_session';
/** A session ends this long after sign-in, however active. */
export const SESSION_LIFETIME_MS = 8 * 60 * 60 * 1000;
/** Sessions held at once; the oldest is dropped beyond (each needed a valid key to make). */
const MAX_SESSIONS = 10_000;

interface Session {
  org: string;
  keyId: string;
  expires: number;
}

export class Sessions {
  /** By SHA-256 of the session id: a memory dump shows no usable cookie. */
  private readonly byHash = new Map<string, Session>();

  constructor(
    private readonly keys: KeyStore,
    private readonly lifetimeMs = SESSION_LIFETIME_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** A new session for a verified key; returns the id for the cookie. */
  open(record: KeyRecord): string {
    this.sweep();
    if (this.byHash.size >= MAX_SESSIONS) this.byHash.delete(this.byHash.keys().next().value!);
    const id = randomBytes(32).toString('base64url');
    this.byHash.set(hash(id), { org: record.org, keyId: record.id, expires: this.now() + this.lifetimeMs });
    return id;
  }

  get lifetimeSeconds(): number {
    return Math.floor(this.lifetimeMs / 1000);
  }

  /** The key record behind a session id, or null when the session is unknown, expired or its key revoked. */
  async resolve(id: string | undefined): Promise<KeyRecord | null> {
    if (id === undefined || id === '') return null;
    const key = hash(id);
    const session = this.byHash.get(key);
    if (!session) return null;
    if (session.expires <= this.now()) {
      this.byHash.delete(key);
      return null;
    }
    const record = (await this.keys.list(session.org)).find((r) => r.id === session.keyId);
    if (!record || record.revoked !== undefined) {
      this.byHash.delete(key);
      return null;
    }
    return record;
  }

  close(id: string | undefined): void {
    if (id !== undefined) this.byHash.delete(hash(id));
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, session] of this.byHash) if (session.expires <= now) this.byHash.delete(key);
  }
}

function hash(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}
