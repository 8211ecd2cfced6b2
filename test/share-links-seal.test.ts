/**
 * share-links.yaml's seal (src/store/signed-file.ts parseSealed, as keys.yaml's): a file cut
 * short (a disk fault) or changed behind c4store's back is refused, 503 naming it, on every
 * request that needs it, and never read as fewer links — which the next link made would write
 * over it for good. A file without a seal (an earlier version's, or one edited by hand with its
 * seal deleted) still loads, and a server start seals it. Real server, real HTTP.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { startServer } from '../src/server.js';
import { TestServer } from './support/server.js';

const API = '/api/external';
const REFUSAL = /^The data directory's share-links\.yaml cannot be read: .+\. Requests that need it are refused until it is repaired\.$/;
const SEAL = /^# c4store seal: (\d+) links, sha256 [0-9a-f]{64}\n/;

async function anonymous(url: string): Promise<{ status: number; text: string }> {
  const answer = await fetch(url, { redirect: 'manual' });
  return { status: answer.status, text: await answer.text() };
}

test('a share-links.yaml cut anywhere or changed is refused (503 naming it), never read as fewer links; unsealed, it loads and a start seals it', async (t) => {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  const diagram = await s.post(`${API}/diagrams`, { id: 'shop', name: 'Shop', level: 'C1' });
  t.is(diagram.status, 201, diagram.text);
  const urls: string[] = [];
  for (const label of ['README', 'Wiki', 'Slides']) {
    const made = await s.post(`${API}/diagrams/shop/share-links`, { label });
    t.is(made.status, 201, made.text);
    urls.push(made.body.svgUrl);
  }
  const file = join(s.dataDir, 'share-links.yaml');
  const whole = await readFile(file, 'utf8');
  t.is(SEAL.exec(whole)?.[1], '3');

  // Cut at every line's end (a whole link dropped included) and inside the lines.
  const cuts = new Set<number>();
  for (let at = whole.indexOf('\n'); at >= 0; at = whole.indexOf('\n', at + 1)) cuts.add(at + 1);
  for (let at = 1; at < whole.length; at += 13) cuts.add(at);
  cuts.delete(whole.length);
  const changed = whole.replace('label: Wiki', 'label: Wikj');
  for (const [what, text] of [...[...cuts].map((at): [string, string] => [`cut at ${at}`, whole.slice(0, at)]), ['changed', changed]]) {
    await writeFile(file, text, { mode: 0o600 });
    const link = await anonymous(urls[0]!);
    t.is(link.status, 503, `${what}: ${link.text.slice(0, 200)}`);
    const listed = await s.get(`${API}/share-links`);
    t.is(listed.status, 503, what);
    t.regex(listed.body.error, REFUSAL, what);
    t.is((await s.post(`${API}/diagrams/shop/share-links`, { label: 'More' })).status, 503, what);
    t.is(await readFile(file, 'utf8'), text, `${what}: nothing written over it`);
  }
  const sealRefusal = (await s.get(`${API}/share-links`)).body.error as string;
  t.true(sealRefusal.includes('its seal (the first line) does not match the rest'), sealRefusal);
  t.true(sealRefusal.includes('delete the seal line to have each link checked'), sealRefusal);

  // Repaired: every link opens again.
  await writeFile(file, whole, { mode: 0o600 });
  for (const url of urls) t.is((await anonymous(url)).status, 200, url);

  // Edited by hand, its seal deleted: read as it is, each link checked; the next start seals it.
  const unsealed = whole.replace(SEAL, '').replace('label: Wiki', 'label: Team wiki');
  await writeFile(file, unsealed, { mode: 0o600 });
  t.deepEqual(
    (await s.get(`${API}/share-links`)).body.map((link: { label: string }) => link.label),
    ['README', 'Team wiki', 'Slides'],
  );
  const other = await startServer({ dataDir: s.dataDir, port: 0, log: () => {} });
  t.teardown(() => other.close());
  const resealed = await readFile(file, 'utf8');
  t.is(SEAL.exec(resealed)?.[1], '3');
  t.is(resealed.replace(SEAL, ''), unsealed, 'sealed, not otherwise changed');
  for (const url of urls) t.is((await anonymous(url)).status, 200, url);
});
