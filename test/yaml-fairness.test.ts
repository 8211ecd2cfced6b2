/**
 * Issue 16 point 7: one YAML parsing queue served the whole server in arrival order, so org A's
 * large YAML bodies delayed org B's YAML write by 28 s. The worker pool now keeps one queue per
 * organization and serves them in turn.
 */
import test from 'ava';
import { FairQueue } from '../src/http/fair-queue.js';
import { SMALL_BODY_BYTES, YamlPool } from '../src/http/yaml-pool.js';
import { Orgs } from '../src/service/orgs.js';
import { KeyStore } from '../src/store/keys.js';
import { TestServer } from './support/server.js';

/** A YAML body of `entries` small mappings: the `yaml` package spends its time per token. */
function heavyYaml(entries: number, tag: string): string {
  let text = `${tag}:\n`;
  for (let n = 0; n < entries; n++) text += `  - { name: "tag ${n}", color: red, n: ${n} }\n`;
  return text;
}

test("organizations take turns: B waits for the turn running, not for all of A's", async (t) => {
  const queue = new FairQueue(1);
  const finished: string[] = [];
  const turn = async (owner: string, label: string) => {
    await queue.acquire(owner);
    await new Promise((resolve) => setTimeout(resolve, 5));
    finished.push(label);
    queue.release();
  };
  const a = Array.from({ length: 5 }, (_, n) => turn('a', `a${n}`));
  const b = [turn('b', 'b0'), turn('b', 'b1')];
  const c = turn('c', 'c0');
  t.is(queue.queued, 7);
  await Promise.all([...a, ...b, c]);
  // a0 was running; then the organizations that had no turn yet, then whoever waited longest.
  t.deepEqual(finished, ['a0', 'b0', 'c0', 'a1', 'b1', 'a2', 'a3', 'a4']);
  // The slot is handed over, never duplicated: one turn at a time throughout, and none left.
  t.is(queue.queued, 0);
  let running = 0;
  let most = 0;
  await Promise.all(
    Array.from({ length: 20 }, async (_, n) => {
      await queue.acquire(`o${n % 3}`);
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, 1));
      running--;
      queue.release();
    }),
  );
  t.is(most, 1);
});

test('the pool: a small body is parsed while large ones keep the large-body workers busy', async (t) => {
  const pool = new YamlPool({ threads: 1 });
  try {
    const finished: string[] = [];
    const parse = (owner: string, label: string, text: string) =>
      pool.parse(text, owner).then((parsed) => {
        finished.push(label);
        return parsed;
      });
    const heavy = heavyYaml(3000, 'a');
    t.true(heavy.length > SMALL_BODY_BYTES);
    const a = Array.from({ length: 3 }, (_, n) => parse('a', `a${n}`, heavy));
    const small = `b: "${'x'.repeat(30_000)}"`;
    const b = parse('b', 'b0', small);
    t.deepEqual(await b, { value: { b: 'x'.repeat(30_000) } });
    await Promise.all(a);
    t.is(finished[0], 'b0');
    t.deepEqual(finished.slice(1), ['a0', 'a1', 'a2']);
  } finally {
    await pool.close();
  }
});

test("org A's large YAML bodies no longer delay org B's YAML write (generous bound: under half of A's run)", async (t) => {
  const s = await TestServer.start({ yamlThreads: 1 });
  try {
    await new Orgs(s.dataDir).create('quiet', { author: { name: 'test', email: 'test@test' } });
    const { key: quietKey } = await new KeyStore(s.dataDir).create('quiet', { label: 'quiet pipeline' });
    // Each ~250 KB; refused after parsing (a mapping where a list belongs), so A's cost is the parse.
    const heavy = heavyYaml(6_000, 'notAList');
    // The worker is started first, so that the parse running when B arrives is a plain one.
    const warm = await s.request('POST', '/api/external/tag', {
      raw: heavyYaml(600, 'warm'),
      headers: { 'content-type': 'application/yaml' },
    });
    t.is(warm.status, 400);
    const started = Date.now();
    const flood = Array.from({ length: 8 }, () =>
      s.request('POST', '/api/external/tag', { raw: heavy, headers: { 'content-type': 'application/yaml' } }).then((reply) => {
        t.is(reply.status, 400);
        return Date.now() - started;
      }),
    );
    // B's body is over the small-body limit (64 KB), so it waits for the same worker as A's.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const body = `- ref: quiet\n  name: Quiet service\n  typeSlug: container\n  desc: ${'quiet '.repeat(12_000)}\n`;
    t.true(body.length > SMALL_BODY_BYTES);
    const quietStarted = Date.now();
    const quiet = await s.request('POST', '/api/external/component', {
      raw: body,
      key: quietKey,
      headers: { 'content-type': 'application/yaml' },
    });
    const quietMs = Date.now() - quietStarted;
    t.is(quiet.status, 200, quiet.text);
    const floodMs = Math.max(...(await Promise.all(flood)));
    t.log(`B's write: ${quietMs} ms; A's eight bodies: ${floodMs} ms`);
    t.true(quietMs < floodMs / 2, `B waited ${quietMs} ms while A's bodies took ${floodMs} ms`);
  } finally {
    await s.close();
  }
});
