/**
 * Viewer sessions kept in the data directory: shared by every server on it, surviving restarts,
 * ended at once everywhere by sign-out and revocation, and bounded per key and per organization
 * so that no key can push out another's sessions (issue 24.6).
 */
import test from 'ava';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startServer, type RunningServer } from '../src/server.js';
import { Orgs } from '../src/service/orgs.js';
import { KeyStore } from '../src/store/keys.js';
import { Sessions } from '../src/viewer/sessions.js';
import { sessionCookie, TestServer } from './support/server.js';

/** 200 when the cookie opens the index page, 302 (to sign-in) when it does not. */
async function pageStatus(url: string, cookie: string): Promise<number> {
  return (await fetch(`${url}/`, { redirect: 'manual', headers: { cookie } })).status;
}

async function signOut(url: string, cookie: string): Promise<void> {
  await fetch(`${url}/sign-out`, { method: 'POST', redirect: 'manual', headers: { cookie, origin: url } });
}

async function second(dataDir: string): Promise<RunningServer> {
  return startServer({ dataDir, port: 0, log: () => undefined, packEvery: 0 });
}

test('a cookie made by one server works on another on the same data directory, and after a restart', async (t) => {
  const a = await TestServer.start({ packEvery: 0 });
  let b = await second(a.dataDir);
  try {
    const cookie = await sessionCookie(a.url, a.key);
    t.regex(cookie, /^c4s_session=acme\.[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/);
    t.is(await pageStatus(a.url, cookie), 200);
    t.is(await pageStatus(b.url, cookie), 200, 'the other instance knows the session');
    await b.close();
    b = await second(a.dataDir);
    t.is(await pageStatus(b.url, cookie), 200, 'a restarted instance still knows it');
    t.is(await pageStatus(b.url, `${cookie.slice(0, -2)}xx`), 302, 'a forged secret opens nothing');
  } finally {
    await b.close();
    await a.close();
  }
});

test('sign-out on one server ends the session on every other at once', async (t) => {
  const a = await TestServer.start({ packEvery: 0 });
  const b = await second(a.dataDir);
  try {
    const cookie = await sessionCookie(a.url, a.key);
    const kept = await sessionCookie(b.url, a.key);
    t.is(await pageStatus(b.url, cookie), 200);
    await signOut(b.url, cookie);
    t.is(await pageStatus(a.url, cookie), 302);
    t.is(await pageStatus(b.url, cookie), 302);
    t.is(await pageStatus(a.url, kept), 200, 'only that session ended');
  } finally {
    await b.close();
    await a.close();
  }
});

test('revoking a key ends its sessions on every server at once', async (t) => {
  const a = await TestServer.start({ packEvery: 0 });
  const b = await second(a.dataDir);
  try {
    const cookie = await sessionCookie(a.url, a.key);
    const reader = await sessionCookie(a.url, a.readerKey);
    const keys = new KeyStore(a.dataDir);
    const editor = (await keys.list(a.slug)).find((r) => r.role === 'editor')!;
    await keys.revoke(a.slug, editor.id);
    t.is(await pageStatus(b.url, cookie), 302);
    t.is(await pageStatus(a.url, cookie), 302);
    t.is(await pageStatus(b.url, reader), 200, "another key's session stays");
    t.false((await readdir(join(a.dataDir, 'sessions', a.slug))).includes(editor.id), 'its files are gone');
  } finally {
    await b.close();
    await a.close();
  }
});

test("signing in again and again with any key pushes out no one else's session (24.6)", async (t) => {
  const s = await TestServer.start({ packEvery: 0 });
  try {
    await new Orgs(s.dataDir).create('other', { name: 'Other', members: [], author: { name: 't', email: 't@t' } });
    const keys = new KeyStore(s.dataDir);
    const { key: otherKey } = await keys.create('other', { role: 'reader' });
    const victim = await sessionCookie(s.url, s.key);
    const sameOrgReader = (await keys.list(s.slug)).find((r) => r.role === 'reader')!;
    for (let i = 0; i < 30; i++) await sessionCookie(s.url, s.readerKey);
    t.is(await pageStatus(s.url, victim), 200, "a key of the same organization cannot push out another key's session");
    const held = await readdir(join(s.dataDir, 'sessions', s.slug, sameOrgReader.id));
    t.is(held.length, 20, 'a key holds at most 20 sessions');

    // Another organization's key, straight at the store (the server here serves only `acme`).
    const sessions = new Sessions(keys);
    const otherRecord = (await keys.list('other'))[0]!;
    t.truthy(await keys.verify(otherKey));
    for (let i = 0; i < 50; i++) await sessions.open(otherRecord);
    t.is(await pageStatus(s.url, victim), 200, "another organization's key cannot either");
    t.is((await readdir(join(s.dataDir, 'sessions', 'other', otherRecord.id))).length, 20);
  } finally {
    await s.close();
  }
});

test('a full organization gives up the oldest session of the key holding the most', async (t) => {
  const s = await TestServer.start({ packEvery: 0 });
  try {
    const keys = new KeyStore(s.dataDir);
    const [editor, reader] = await keys.list(s.slug);
    const { record: third } = await keys.create(s.slug, { label: 'third', role: 'reader' });
    let now = 1_000_000;
    const sessions = new Sessions(keys, 60_000, () => now++, { perKey: 3, perOrg: 5 });
    const editorSessions = [await sessions.open(editor!), await sessions.open(editor!)];
    const readerSessions: string[] = [];
    for (let i = 0; i < 10; i++) readerSessions.push(await sessions.open(reader!));
    // The reader key pushed out only its own: it holds its three newest, the editor both of its own.
    for (const cookie of editorSessions) t.is((await sessions.resolve(cookie))?.id, editor!.id);
    t.deepEqual(await Promise.all(readerSessions.map(async (c) => (await sessions.resolve(c)) !== null)), [
      ...Array(7).fill(false),
      true,
      true,
      true,
    ]);
    // Full (2 + 3 = 5): a third key's sign-in takes the reader's oldest, not the editor's.
    const thirdSession = await sessions.open(third);
    t.is((await sessions.resolve(thirdSession))?.id, third.id);
    for (const cookie of editorSessions) t.is((await sessions.resolve(cookie))?.id, editor!.id);
    t.is(await sessions.resolve(readerSessions[7]), null);
    t.is((await sessions.resolve(readerSessions[8]!))?.id, reader!.id);
  } finally {
    await s.close();
  }
});

test('ended sessions and cookies of any other shape open nothing and touch no file outside the store', async (t) => {
  const s = await TestServer.start({ packEvery: 0 });
  try {
    const keys = new KeyStore(s.dataDir);
    const [editor] = await keys.list(s.slug);
    let now = 5_000;
    const sessions = new Sessions(keys, 60_000, () => now);
    const cookie = await sessions.open(editor!);
    for (const forged of ['', 'x', `../${cookie}`, cookie.replace('acme', '..'), `${cookie}.x`, cookie.replace(/\.[^.]*$/, '.')]) {
      t.is(await sessions.resolve(forged), null, forged);
    }
    now += 60_000;
    t.is(await sessions.resolve(cookie), null);
    now = 5_000;
    t.is(await sessions.resolve(cookie), null, 'an ended session is gone for good');
  } finally {
    await s.close();
  }
});
