/**
 * Share links: read-only, revocable addresses of one diagram's page and drawings that need no
 * session and no key, for embedding in wikis and READMEs (docs/api.md §16). Kept in
 * `<dataDir>/share-links.yaml`, outside every model repository (a link is not part of the
 * model and must not travel with clones), beside keys.yaml and the same way: only the SHA-256
 * of a token is stored (the token is shown once, when made); writers take a cross-process lock
 * and publish by rename; readers notice a new file by its stat signature on every call, so a
 * link revoked by any process of the data directory answers 404 on the next request. Sealed
 * by its first line as keys.yaml is (signed-file.ts parseSealed): a file cut between two links
 * is refused, never read as fewer links (which the next write would make for good).
 *
 * A link made from the viewer's form may be asked for twice (its answer lost, the browser or a
 * balancer sending the form again): the form carries the token the link is to have, drawn with
 * the page, so the same form sent again finds its link and shows it again rather than making a
 * second. A revoked link is remembered for a while (`revoked`, its id and hash only), so that a
 * revoke sent again is told from one of a link that never was, and that a make sent again after
 * the revoke does not bring the link back.
 */
import { parseSealed, readSigned, sealed, sha256Hex, statSignature } from '../store/signed-file.js';
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { replaceFile } from '../store/durable-files.js';
import { withDirectoryLock } from '../store/lock.js';

export interface ShareLink {
  /** Names the link in lists and revocations; not the token. */
  id: string;
  org: string;
  /** The identity of the organization the link was made in: a link opens nothing in a new organization under the same slug. */
  orgId: string;
  diagram: string;
  /** Where the link is used ("README", "Confluence: Payments"), as its maker said; may be empty. */
  label: string;
  /** Hex SHA-256 of the token. */
  hash: string;
  /** ISO time. */
  created: string;
  /** The label of the key that made it. */
  createdBy: string;
  /**
   * The commit of main the diagram was seen in when the link was made: a delete after it ends the
   * link (share/continuity.ts). Links made before it was kept have none; their `created` time stands in.
   */
  commit?: string;
  /** ISO time from which the link opens nothing. A link made without a lifetime has none, and lasts until revoked. */
  expires?: string;
}

/** A link revoked: its id and the hash of its token, remembered for REVOKED_KEPT_MS after. */
export interface RevokedLink {
  id: string;
  org: string;
  orgId: string;
  hash: string;
  /** ISO time. */
  revoked: string;
}

export const SHARE_LINKS_FILE_NAME = 'share-links.yaml';
const LOCK_NAME = 'share-links.yaml.lock';
/** 256 random bits, base64url: 43 characters no one guesses. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** Links an organization may hold at once: each is a line every request's lookup keeps in memory. */
export const MAX_LINKS_PER_ORG = 1_000;
/** How long a revoke is remembered: a form or a revoke sent again later than this is taken as new. */
export const REVOKED_KEPT_MS = 30 * 24 * 3600 * 1000;
/** Revokes remembered per organization, the newest. */
const MAX_REVOKED_PER_ORG = 1_000;

/** A new link's token: 256 random bits. */
export function drawToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Whether `token` has a token's form (what drawToken draws). */
export function isToken(token: unknown): token is string {
  return typeof token === 'string' && TOKEN_PATTERN.test(token);
}

interface Stored {
  links: ShareLink[];
  revoked: RevokedLink[];
}

interface Snapshot extends Stored {
  signature: string;
  byHash: Map<string, ShareLink>;
}

/**
 * Whether a link belongs to the organization under `org` whose identity is `orgId`: one removed
 * and created again under its slug has a new identity, and its labels, creators and diagram ids
 * are not the new one's to see, count or revoke.
 */
function ownedBy(link: Pick<ShareLink, 'org' | 'orgId'>, org: string, orgId: string | undefined): boolean {
  return link.org === org && orgId !== undefined && link.orgId === orgId;
}

export class ShareLinks {
  readonly file: string;
  private snapshot: Snapshot | null = null;

  constructor(dataDir: string) {
    this.file = path.join(path.resolve(dataDir), SHARE_LINKS_FILE_NAME);
  }

  /**
   * A new link to `diagram`; the token is returned here and never again. `token`: the one the
   * link is to have (the viewer's form draws it with the page). A link already made with it, of
   * this organization, diagram and label, is that form sent again: returned as it is, `again`.
   */
  async create(
    link: Omit<ShareLink, 'id' | 'hash' | 'created' | 'expires'> & { commit: string; expiresInDays?: number },
    token = drawToken(),
  ): Promise<{ token: string; link: ShareLink; again: boolean }> {
    const now = Date.now();
    const made: ShareLink = {
      id: randomBytes(8).toString('hex'),
      org: link.org,
      orgId: link.orgId,
      diagram: link.diagram,
      label: link.label,
      hash: sha256Hex(token),
      created: new Date(now).toISOString(),
      createdBy: link.createdBy,
      commit: link.commit,
      ...(link.expiresInDays === undefined ? {} : { expires: new Date(now + link.expiresInDays * DAY_MS).toISOString() }),
    };
    let found: ShareLink | undefined;
    await this.modify((stored) => {
      found = stored.links.find((l) => l.hash === made.hash);
      if (found !== undefined) {
        if (ownedBy(found, link.org, link.orgId) && found.diagram === link.diagram && found.label === link.label) return null;
        throw new TokenUsed('made');
      }
      if (stored.revoked.some((r) => r.hash === made.hash)) throw new TokenUsed('revoked');
      // Expired links are listed, but hold no place.
      if (stored.links.filter((l) => ownedBy(l, link.org, link.orgId) && !expired(l, now)).length >= MAX_LINKS_PER_ORG)
        throw new TooManyLinks();
      return { ...stored, links: [...stored.links, made] };
    });
    return { token, link: { ...(found ?? made) }, again: found !== undefined };
  }

  /**
   * The organization's links, oldest first; `diagram` narrows them to one diagram. `orgId` is its
   * identity: an organization made anew under a slug sees none of the old one's links.
   */
  async list(org: string, orgId: string | undefined, diagram?: string): Promise<ShareLink[]> {
    const { links } = await this.current();
    return links.filter((l) => ownedBy(l, org, orgId) && (diagram === undefined || l.diagram === diagram)).map((l) => ({ ...l }));
  }

  /** Removes the link; the removed link, or undefined when the organization has no link with that id. */
  async revoke(org: string, orgId: string | undefined, id: string): Promise<ShareLink | undefined> {
    let removed: ShareLink | undefined;
    await this.modify((stored) => {
      removed = stored.links.find((l) => ownedBy(l, org, orgId) && l.id === id);
      if (!removed) return null;
      const gone: RevokedLink = { id, org, orgId: removed.orgId, hash: removed.hash, revoked: new Date().toISOString() };
      return { links: stored.links.filter((l) => l !== removed), revoked: [...stored.revoked, gone] };
    });
    return removed && { ...removed };
  }

  /** Whether the organization revoked a link with that id in the last REVOKED_KEPT_MS. */
  async wasRevoked(org: string, orgId: string | undefined, id: string): Promise<boolean> {
    return (await this.current()).revoked.some((r) => ownedBy(r, org, orgId) && r.id === id && !forgotten(r, Date.now()));
  }

  /** The link a token opens, or null for a malformed, unknown, revoked or expired one. */
  async resolve(token: string): Promise<ShareLink | null> {
    if (typeof token !== 'string' || !TOKEN_PATTERN.test(token)) return null;
    // Looked up by the token's hash: nothing an attacker can steer byte by byte.
    const link = (await this.current()).byHash.get(sha256Hex(token));
    return link && !expired(link, Date.now()) ? { ...link } : null;
  }

  private async current(): Promise<Snapshot> {
    const signature = statSignature(this.file);
    if (this.snapshot?.signature !== signature) this.snapshot = await readLinks(this.file);
    return this.snapshot;
  }

  /**
   * Writes the file in today's form if it is not (sealed): a file an earlier version wrote, or
   * one edited by hand with its seal deleted, is sealed from then on. Run when a server starts;
   * changes no link.
   */
  async rewriteInCurrentForm(): Promise<void> {
    const text = await fsp.readFile(this.file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (text === null || text === linksFileText(parseLinks(text, this.file))) return;
    await this.modify((stored) => stored);
  }

  /** `change` returns the new lists, or null when there is nothing to write. */
  private async modify(change: (stored: Stored) => Stored | null): Promise<void> {
    await fsp.mkdir(path.dirname(this.file), { recursive: true });
    await withDirectoryLock(
      path.dirname(this.file),
      async () => {
        // Re-read under the lock: another process may have written since our last look.
        const { links, revoked } = await readLinks(this.file);
        const changed = change({ links, revoked });
        const now = Date.now();
        if (changed) {
          // Links expired longer ago than a revoke is remembered are dropped: they open nothing, and nobody needs them listed.
          const kept = changed.links.filter((l) => !expired(l, now - REVOKED_KEPT_MS));
          await writeLinks(this.file, { links: kept, revoked: remembered(changed.revoked, now) });
        }
        this.snapshot = await readLinks(this.file);
      },
      LOCK_NAME,
    );
  }
}

const DAY_MS = 24 * 3600 * 1000;

/** Whether the link opens nothing any more at `now` (ms): its expiry passed. */
export function expired(link: ShareLink, now: number): boolean {
  return link.expires !== undefined && !(Date.parse(link.expires) > now);
}

/** A revoke remembered for longer than REVOKED_KEPT_MS. */
function forgotten(revoked: RevokedLink, now: number): boolean {
  return !(Date.parse(revoked.revoked) > now - REVOKED_KEPT_MS);
}

/** The revokes still remembered: those of the last REVOKED_KEPT_MS, the newest MAX_REVOKED_PER_ORG of each organization. */
function remembered(revoked: readonly RevokedLink[], now: number): RevokedLink[] {
  const perOrg = new Map<string, number>();
  const kept: RevokedLink[] = [];
  for (const r of [...revoked].reverse()) {
    const count = perOrg.get(r.orgId) ?? 0;
    if (forgotten(r, now) || count >= MAX_REVOKED_PER_ORG) continue;
    perOrg.set(r.orgId, count + 1);
    kept.push(r);
  }
  return kept.reverse();
}

/** A token given for a new link that an earlier one has or had: its form was sent before. */
export class TokenUsed extends Error {
  constructor(readonly why: 'made' | 'revoked') {
    super(
      why === 'made'
        ? 'This form has already made a share link: reload the page to make another.'
        : 'The share link this form made was revoked since: reload the page to make a new one.',
    );
  }
}

export class TooManyLinks extends Error {
  constructor() {
    super(`An organization holds at most ${MAX_LINKS_PER_ORG.toLocaleString('en-US')} share links: revoke some first.`);
  }
}

async function readLinks(file: string): Promise<Snapshot> {
  const { signature, value } = await readSigned(file, (text) => parseLinks(text, file));
  const links = value?.links ?? [];
  return { signature, links, revoked: value?.revoked ?? [], byHash: new Map(links.map((link) => [link.hash, link])) };
}

// A file we cannot read is an error, never "no links": an empty list would be written over it.
function parseLinks(text: string, file: string): Stored {
  let revoked: RevokedLink[] = [];
  const links = parseSealed(text, file, 'links', (text) => {
    const document = parse(text) as { links?: unknown; revoked?: unknown } | null;
    revoked = revokedOf(document?.revoked, file);
    return linksOf(document, file);
  });
  return { links, revoked };
}

/** The revokes remembered: absent in files written before they were (and when there are none). */
function revokedOf(list: unknown, file: string): RevokedLink[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new Error(`${file}: 'revoked' must be a list.`);
  const fields = ['id', 'org', 'orgId', 'hash', 'revoked'] as const;
  return list.map((item: unknown, index) => {
    const entry = item as Record<string, unknown> | null;
    if (
      entry === null ||
      typeof entry !== 'object' ||
      !fields.every((f) => typeof entry[f] === 'string') ||
      !/^[0-9a-f]{64}$/.test(String(entry.hash))
    ) {
      throw new Error(`${file}: revoked link #${index + 1} is malformed.`);
    }
    return Object.fromEntries(fields.map((f) => [f, entry[f]])) as unknown as RevokedLink;
  });
}

function linksOf(document: { links?: unknown } | null, file: string): ShareLink[] {
  // Always written as a mapping with a `links` list: anything else is damage, never "no links".
  const links = document !== null && typeof document === 'object' && !Array.isArray(document) ? document.links : undefined;
  if (!Array.isArray(links)) throw new Error(`${file}: 'links' must be a list.`);
  const fields = ['id', 'org', 'orgId', 'diagram', 'label', 'hash', 'created', 'createdBy'] as const;
  return links.map((item: unknown, index) => {
    const link = item as Record<string, unknown> | null;
    const valid =
      link !== null &&
      typeof link === 'object' &&
      fields.every((f) => typeof link[f] === 'string') &&
      /^[0-9a-f]{64}$/.test(String(link.hash));
    if (
      !valid ||
      (link.commit !== undefined && !/^[0-9a-f]{40,64}$/.test(String(link.commit))) ||
      (link.expires !== undefined && (typeof link.expires !== 'string' || Number.isNaN(Date.parse(link.expires))))
    ) {
      throw new Error(`${file}: link #${index + 1} is malformed.`);
    }
    const parsed = Object.fromEntries(fields.map((f) => [f, link[f]])) as unknown as ShareLink;
    if (link.commit !== undefined) parsed.commit = String(link.commit);
    if (link.expires !== undefined) parsed.expires = String(link.expires);
    return parsed;
  });
}

function linksFileText({ links, revoked }: Stored): string {
  const rest = [
    '# c4store share links: SHA-256 hashes of their tokens only. Made and revoked through the API.',
    '# The first line seals the rest: a file cut short or changed is refused. After editing it by hand, delete that line.',
    // `revoked` only when there are some: a file without is as earlier versions wrote it.
    stringify(revoked.length > 0 ? { links, revoked } : { links }),
  ].join('\n');
  return sealed(rest, links.length, 'links');
}

async function writeLinks(file: string, stored: Stored): Promise<void> {
  await replaceFile(file, linksFileText(stored), { mode: 0o600, durable: true });
}
