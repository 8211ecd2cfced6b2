/**
 * Issue 15 point 4: a stream of writes to one organization must not starve writes to another.
 * One organization is flooded with concurrent writes, JSON and large YAML (valid, each parsed
 * on the worker pool); the other writes one request after another, JSON and YAML, and its
 * p99 must stay bounded. What the two share: the event loop, the YAML worker pool (one queue per
 * organization, served in turn), the body budget; each organization has its own write lock and
 * its own bound on waiting writes.
 */
import test from 'ava';
import { Orgs } from '../src/service/orgs.js';
import { KeyStore } from '../src/store/keys.js';
import { TestServer } from './support/server.js';

const JSON_FLOODERS = 8;
const YAML_FLOODERS = 4;
const QUIET_MS = 5000;
/** Generous: on an idle 2-core machine the quiet p99 is ~0.3 s; with the old single YAML queue it was over 4 s. */
const QUIET_P99_BOUND_MS = 2500;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

test("a flooded organization does not starve another one's writes: the quiet one's p99 stays bounded", async (t) => {
  const s = await TestServer.start({ yamlThreads: 1 });
  try {
    await new Orgs(s.dataDir).create('quiet', { author: { name: 'test', email: 'test@test' } });
    const { key: quietKey } = await new KeyStore(s.dataDir).create('quiet', { label: 'quiet pipeline' });
    // Valid YAML writes that are heavy to parse and cheap to commit: 1,500 tags sent again unchanged.
    const created = await s.post(
      '/api/external/tag',
      Array.from({ length: 1500 }, (_, n) => ({ name: `flood ${n}`, color: 'red' })),
    );
    t.is(created.status, 200);
    const resend = (created.body as Array<{ id: string; name: string }>)
      .map((tag) => `- { id: ${tag.id}, name: "${tag.name}", color: red }`)
      .join('\n');

    let stop = false;
    const floodJsonLatencies: number[] = [];
    const flooded = new Map<string, number>();
    const count = (what: string) => flooded.set(what, (flooded.get(what) ?? 0) + 1);
    const jsonFlooder = async (client: number) => {
      for (let n = 0; !stop; n++) {
        const components = Array.from({ length: 40 }, (_, i) => ({
          ref: `flood-${client}-${n}-${i}`,
          name: `Flood ${client}.${n}.${i}`,
          typeSlug: 'container',
          desc: 'x'.repeat(500),
        }));
        const started = performance.now();
        count(`json ${(await s.post('/api/external/component', components)).status}`);
        floodJsonLatencies.push(performance.now() - started);
      }
    };
    const yamlFlooder = async () => {
      while (!stop) {
        const reply = await s.request('POST', '/api/external/tag', { raw: `${resend}\n`, headers: { 'content-type': 'application/yaml' } });
        count(`yaml ${reply.status}`);
      }
    };
    const flood = [
      ...Array.from({ length: JSON_FLOODERS }, (_, client) => jsonFlooder(client)),
      ...Array.from({ length: YAML_FLOODERS }, () => yamlFlooder()),
    ];
    await new Promise((resolve) => setTimeout(resolve, 500));
    const quietYaml = (n: number) =>
      s.request('POST', '/api/external/component', {
        key: quietKey,
        raw: `- ref: quiet-${n}\n  name: Quiet ${n}\n  typeSlug: container\n  desc: ${'quiet '.repeat(4000)}\n`,
        headers: { 'content-type': 'application/yaml' },
      });
    // Not timed: the first YAML body starts its worker thread (a one-time cost, not a matter of turns).
    t.is((await quietYaml(-1)).status, 200);

    const latencies: number[] = [];
    const ended = Date.now() + QUIET_MS;
    // At least six writes, however long a busy machine makes them; starved, they would not come in a minute.
    const starved = Date.now() + 60_000;
    for (let n = 0; (latencies.length < 6 || Date.now() < ended) && Date.now() < starved; n++) {
      const started = performance.now();
      // Alternately a small JSON write and a YAML write over the inline limit (parsed on the pool).
      const reply =
        n % 2 === 0 ? await s.post('/api/external/tag', [{ name: `quiet ${n}`, color: 'blue' }], { key: quietKey }) : await quietYaml(n);
      latencies.push(performance.now() - started);
      t.is(reply.status, 200, reply.text);
    }
    stop = true;
    await Promise.all(flood);
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    const floodedP50 = percentile(floodJsonLatencies, 50);
    t.log(
      `quiet: ${latencies.length} writes, p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms; ` +
        `flooded: ${JSON.stringify([...flooded])}, its JSON writes' p50 ${floodedP50.toFixed(0)} ms`,
    );
    t.true((flooded.get('json 200') ?? 0) > 0 && (flooded.get('yaml 200') ?? 0) > 0, 'the flood was served too');
    t.true(latencies.length >= 6, `only ${latencies.length} quiet writes in a minute`);
    // Starved would mean waiting behind the flood's queue. The bound: within QUIET_P99_BOUND_MS, or,
    // on a machine so loaded that even that is too little, under the flooded organization's own
    // median write (which waits for its own queue).
    t.true(
      p99 < Math.max(QUIET_P99_BOUND_MS, floodedP50),
      `p99 ${p99.toFixed(0)} ms, the flooded organization's p50 ${floodedP50.toFixed(0)} ms`,
    );
  } finally {
    await s.close();
  }
});
