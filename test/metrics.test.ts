/**
 * `/metrics` (src/ops/metrics.ts), scraped over HTTP and read by the reference Prometheus
 * client's text-format parser: requests by route and status, write lock wait and commit time,
 * organizations loaded, the snapshot cache, background backlogs; served to the loopback address
 * only, or with the metrics token.
 */
import test from 'ava';
import { networkInterfaces } from 'node:os';
import { TestServer } from './support/server.js';
import { parsePrometheusText, sampleValue } from './support/prometheus.js';

const API = '/api/external';

async function scrape(url: string, headers: Record<string, string> = {}) {
  const answer = await fetch(`${url}/metrics`, { headers });
  return { status: answer.status, type: answer.headers.get('content-type'), text: await answer.text() };
}

test('a scrape counts requests by route and status, and shows writes, organizations, the snapshot cache and backlogs', async (t) => {
  const s = await TestServer.start({ packEvery: 1000 });
  try {
    const first = await s.head();
    t.is((await s.get(`${API}/tag`)).status, 200);
    t.is((await s.get(`${API}/tag`, { key: null })).status, 401);
    t.is((await s.post(`${API}/tag`, [{ name: 'measured', color: 'red' }])).status, 200);
    t.is((await s.post(`${API}/tag`, [{ name: 'measured too', color: 'blue' }])).status, 200);
    t.is((await s.get(`${API}/tag/nope`)).status, 404);
    t.is((await s.get(`${API}/tag?at=${first}`)).status, 200);
    t.is((await s.get('/no/such/page', { key: null })).status, 404);

    const answer = await scrape(s.url);
    t.is(answer.status, 200);
    t.regex(answer.type!, /^text\/plain; version=0\.0\.4/);
    const families = await parsePrometheusText(answer.text);

    const requests = (labels: Record<string, string>) => sampleValue(families, 'c4store_http_requests_total', labels);
    t.is(requests({ method: 'GET', route: `${API}/tag`, status: '200' }), 2, 'the list and its ?at= read');
    t.is(requests({ method: 'GET', route: `${API}/tag`, status: '401' }), 1, 'a refused request counts under the route it asked for');
    t.is(requests({ method: 'POST', route: `${API}/tag`, status: '200' }), 2);
    t.is(requests({ method: 'GET', route: `${API}/tag/:id`, status: '404' }), 1);
    t.is(requests({ method: 'GET', route: 'unmatched', status: '404' }), 1, 'unknown paths share one label');
    t.is(families.get('c4store_http_request_duration_seconds')?.type, 'histogram');
    t.is(sampleValue(families, 'c4store_http_request_duration_seconds_count', { method: 'POST', route: `${API}/tag`, status: '200' }), 2);
    t.is(sampleValue(families, 'c4store_http_request_duration_seconds_bucket', { method: 'POST', route: `${API}/tag`, le: '+Inf' }), 2);

    t.is(sampleValue(families, 'c4store_write_commit_seconds_count'), 2);
    t.is(sampleValue(families, 'c4store_write_lock_wait_seconds_count'), 2);
    t.true(sampleValue(families, 'c4store_write_commit_seconds_sum')! > 0);

    t.is(sampleValue(families, 'c4store_organizations_loaded'), 1);
    t.is(sampleValue(families, 'c4store_snapshot_cache_entries'), 1, 'the ?at= snapshot');
    t.true(sampleValue(families, 'c4store_snapshot_cache_bytes')! > 0);
    t.is(sampleValue(families, 'c4store_packing_backlog_commits'), 2, 'two commits not packed yet');
    t.is(sampleValue(families, 'c4store_packing_running'), 0);
    t.is(sampleValue(families, 'c4store_mirrors'), 0);
    t.is(sampleValue(families, 'c4store_mirror_backlog'), 0);
    t.is(sampleValue(families, 'c4store_draining'), 0);
    t.is(sampleValue(families, 'c4store_http_requests_in_flight'), 1, 'the scrape itself');
    t.true(sampleValue(families, 'c4store_process_resident_memory_bytes')! > 0, 'the process figures are merged in');
    for (const family of families.values()) t.true(family.help.length > 0, `${family.name} has its help text`);
  } finally {
    await s.close();
  }
});

test('answers kept in the bounded stores are shown: filtered lists, PNGs at each scale asked for, drawings', async (t) => {
  const s = await TestServer.start({ packEvery: 0 });
  try {
    const families = async () => parsePrometheusText((await scrape(s.url)).text);
    const before = await families();
    t.is(sampleValue(before, 'c4store_png_answers_bytes'), 0);
    t.is(sampleValue(before, 'c4store_filtered_answers_bytes'), 0);
    t.is(sampleValue(before, 'c4store_drawings_kept_bytes'), 0);

    t.is((await s.post(`${API}/component`, [{ ref: 'api', name: 'Shop API' }])).status, 200);
    const diagram = await s.post(`${API}/diagrams`, {
      id: 'shop',
      name: 'Shop',
      componentInstances: [{ ref: 'a', componentId: 'api', position: { x: 0, y: 0 }, width: 12, height: 6 }],
    });
    t.is(diagram.status, 201, diagram.text);
    const sizes = new Map<string, number>();
    for (const scale of ['1', '0.5', '0.75', '0.5']) {
      const png = await fetch(`${s.url}${API}/diagrams/shop?scale=${scale}`, {
        headers: { authorization: `Bearer ${s.key}`, accept: 'image/png' },
      });
      t.is(png.status, 200);
      sizes.set(scale, (await png.arrayBuffer()).byteLength);
    }
    t.is((await s.get(`${API}/components?name=Shop`)).status, 200);
    const after = await families();
    const distinct = [...sizes.values()].reduce((sum, size) => sum + size, 0);
    t.is(sampleValue(after, 'c4store_png_answers_bytes'), distinct, 'one PNG per scale asked for, the repeated one kept once');
    t.true(sampleValue(after, 'c4store_filtered_answers_bytes')! > 0);
    t.true(sampleValue(after, 'c4store_drawings_kept_bytes')! > 0, 'the drawing the PNGs were made from');
  } finally {
    await s.close();
  }
});

test('without a token only a direct loopback client may scrape: a proxied request is refused', async (t) => {
  const s = await TestServer.start({ packEvery: 0 });
  try {
    for (const header of ['x-forwarded-for', 'forwarded']) {
      const refused = await s.get('/metrics', {
        key: null,
        headers: { [header]: header === 'forwarded' ? 'for=203.0.113.9' : '203.0.113.9' },
      });
      t.is(refused.status, 403);
      t.regex(refused.body.error, /loopback address only/);
    }
    const external = Object.values(networkInterfaces())
      .flat()
      .find((address) => address && address.family === 'IPv4' && !address.internal);
    if (external === undefined) {
      t.log('no non-loopback address on this machine: the remote case is not tried');
      return;
    }
    const wide = await TestServer.start({ packEvery: 0, host: '0.0.0.0' });
    try {
      const port = new URL(wide.url).port;
      const remote = await scrape(`http://${external!.address}:${port}`);
      t.is(remote.status, 403, 'a client on another address');
      t.is((await scrape(`http://127.0.0.1:${port}`)).status, 200);
    } finally {
      await wide.close();
    }
  } finally {
    await s.close();
  }
});

test('with a metrics token a scrape must present it, from anywhere', async (t) => {
  const token = 'scrape-token-0123456789';
  const s = await TestServer.start({ packEvery: 0, metricsToken: token });
  try {
    const missing = await s.get('/metrics', { key: null });
    t.is(missing.status, 401);
    t.is(missing.headers.get('www-authenticate'), 'Bearer');
    t.is((await s.get('/metrics', { key: null, headers: { authorization: `Bearer ${token}x` } })).status, 401);
    t.is(
      (await s.get('/metrics', { key: null, headers: { authorization: `Bearer ${s.key}` } })).status,
      401,
      'an API key is not the token',
    );
    const allowed = await scrape(s.url, { authorization: `Bearer ${token}`, 'x-forwarded-for': '203.0.113.9' });
    t.is(allowed.status, 200);
    t.truthy(sampleValue(await parsePrometheusText(allowed.text), 'c4store_organizations_loaded') !== undefined);
  } finally {
    await s.close();
  }
});
