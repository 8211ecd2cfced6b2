/**
 * The OpenAPI document tells the truth about the running server: a broad scenario over real HTTP
 * (both API forms, every operation, successes and refusals) is judged exchange by exchange by
 * docs/openapi.json itself (test/support/openapi-judge.ts: the status declared, the media type
 * declared, the body valid against that media type's schema with Ajv, the headers a client reads
 * declared, and a request the server took one the document allows). Every operation of the
 * document must have been seen to succeed.
 */
import test, { type ExecutionContext } from 'ava';
import YAML from 'yaml';
import { judge, openapi, operationIdOf } from './support/openapi-judge.js';
import { documentObjections } from './support/requests.js';
import { TestServer } from './support/server.js';

const API = '/api/external';

interface Options {
  body?: unknown;
  raw?: string | Buffer;
  yaml?: boolean;
  key?: string | null;
  headers?: Record<string, string>;
  accept?: string;
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

class Probe {
  readonly problems: string[] = [];
  /** Answers other than the scenario expects. */
  readonly wrong: string[] = [];
  /** operationId → statuses seen. */
  readonly seen = new Map<string, Set<number>>();

  constructor(
    readonly t: ExecutionContext,
    readonly s: TestServer,
  ) {}

  async call(method: string, url: string, options: Options = {}): Promise<Answer> {
    const headers: Record<string, string> = {};
    const key = options.key === undefined ? this.s.key : options.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let body: string | Buffer | undefined = options.raw;
    if (options.body !== undefined) body = options.yaml ? YAML.stringify(options.body) : JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] = options.yaml ? 'application/yaml' : 'application/json';
    if (options.yaml) headers.accept = 'application/yaml';
    if (options.accept) headers.accept = options.accept;
    Object.assign(headers, options.headers);
    const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    const streaming = new AbortController();
    const response = await fetch(this.s.url + url, { method, headers, body, signal: streaming.signal });
    let bytes: Buffer;
    if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      // A stream never ends: its first piece is what there is to judge.
      const reader = response.body!.getReader();
      const first = await reader.read();
      bytes = Buffer.from(first.value ?? []);
      streaming.abort();
    } else bytes = Buffer.from(await response.arrayBuffer());
    const status = response.status;
    const problems = judge({
      method,
      url,
      requestHeaders: lower,
      requestBody: options.body ?? (typeof options.raw === 'string' ? tryParse(options.raw) : undefined),
      sentBody: body !== undefined && body.length > 0,
      status,
      headers: response.headers,
      bytes,
    });
    this.problems.push(...problems);
    const id = operationIdOf(method, url.split('?')[0]);
    if (id !== undefined) {
      if (!this.seen.has(id)) this.seen.set(id, new Set());
      this.seen.get(id)!.add(status);
    }
    const type = response.headers.get('content-type') ?? '';
    const text = type.startsWith('image/png') ? '' : bytes.toString('utf8');
    let parsed: unknown;
    if (text !== '' && /json|yaml/.test(type)) parsed = type.includes('yaml') ? YAML.parse(text) : JSON.parse(text);
    return { status, headers: response.headers, text, body: parsed };
  }

  /** A request that must answer `status`. */
  async expect(status: number, method: string, url: string, options: Options = {}): Promise<Answer> {
    const answer = await this.call(method, url, options);
    if (answer.status !== status) this.wrong.push(`${method} ${url}: ${answer.status}, not ${status}: ${answer.text.slice(0, 300)}`);
    return answer;
  }
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function scenario(p: Probe): Promise<void> {
  const { s } = p;
  const e = p.expect.bind(p);

  // Service.
  await e(200, 'GET', '/healthz', { key: null });
  await e(200, 'GET', `${API}/openapi.json`, { key: null });

  // Types, both spellings.
  const types = (await e(200, 'GET', `${API}/type`)).body;
  const container = types.find((x: { slug: string }) => x.slug === 'container').id;
  const first = await e(200, 'GET', `${API}/types?limit=2`);
  await e(200, 'GET', `${API}/types?name=contain`, { yaml: true });
  await e(200, 'GET', `${API}/type/${container}`);
  await e(200, 'GET', `${API}/types/${container}`, { yaml: true });
  await e(304, 'GET', `${API}/types/${container}`, { headers: { 'if-none-match': first.headers.get('etag')! } });
  await e(404, 'GET', `${API}/type/nope`);
  await e(405, 'DELETE', `${API}/types/${container}`);
  await e(400, 'GET', `${API}/types?limit=0`);
  await e(400, 'GET', `${API}/types?nmae=x`);

  // The seed's form: tags, attributes, components, diagrams, model.
  const [tag] = (await e(200, 'POST', `${API}/tag`, { body: [{ name: 'PCI', color: 'red', ref: 'pci' }] })).body;
  await e(200, 'GET', `${API}/tag`);
  await e(200, 'GET', `${API}/tag/${tag.id}`, { yaml: true });
  await e(200, 'POST', `${API}/tag`, { body: [{ id: tag.id, name: 'PCI', color: 'red', desc: 'cards' }], yaml: true });
  const [attribute] = (await e(200, 'PUT', `${API}/attribute`, { body: [{ name: 'Tier', type: 'LIST', list: ['gold', 'silver'] }] })).body;
  await e(200, 'POST', `${API}/attribute`, {
    body: [{ id: attribute.id, name: 'Tier', type: 'LIST', list: ['gold', 'silver', 'bronze'] }],
  });
  await e(200, 'PUT', `${API}/attributes`, { body: [{ name: 'Owner', type: 'STRING' }] });
  await e(200, 'POST', `${API}/attributes`, { body: [{ name: 'Cost', type: 'NUMBER' }] });
  await e(201, 'POST', `${API}/attributes`, { body: { id: 'sla', name: 'SLA', type: 'STRING' } });
  await e(200, 'GET', `${API}/attribute`);
  await e(200, 'GET', `${API}/attribute/${attribute.id}`);
  await e(200, 'GET', `${API}/attributes?name=ti`);
  await e(200, 'GET', `${API}/attributes/sla`);
  const [pay] = (
    await e(200, 'PUT', `${API}/component`, {
      body: [{ name: 'Payment API', typeSlug: 'container', ref: 'pay', tags: [tag.id], attributes: [{ id: attribute.id, value: 'gold' }] }],
    })
  ).body;
  const [ledger] = (await e(200, 'POST', `${API}/component`, { body: [{ name: 'Ledger', typeId: container, ref: 'ledger' }] })).body;
  await e(200, 'GET', `${API}/component`);
  await e(200, 'GET', `${API}/component/${pay.id}`);
  const [seedDiagram] = (
    await e(200, 'POST', `${API}/diagram`, {
      body: [
        {
          name: 'Payments',
          level: 'C2',
          ref: 'payments',
          tags: [{ id: tag.id }],
          componentInstances: [
            { ref: 'a', component: pay.id },
            { ref: 'b', componentId: ledger.id },
            { ref: 'box', isContainer: true },
            { ref: 'c', parent: 'box' },
          ],
          textareas: [{ text: 'note' }],
          relations: [{ fromComponentInstance: 'a', toRef: 'b', label: 'posts' }],
        },
      ],
    })
  ).body;
  await e(200, 'GET', `${API}/diagram`);
  await e(200, 'GET', `${API}/diagram?limit=1`);
  await e(200, 'GET', `${API}/diagram/${seedDiagram.id}`);
  await e(200, 'GET', `${API}/diagram/${seedDiagram.id}`, { yaml: true });
  await e(200, 'GET', `${API}/diagram/${seedDiagram.id}`, { accept: 'image/svg+xml' });
  await e(200, 'GET', `${API}/diagram/${seedDiagram.id}?scale=0.5`, { accept: 'image/png' });
  await e(400, 'GET', `${API}/diagram/${seedDiagram.id}?scale=9`, { accept: 'image/png' });
  for (const type of Object.keys(openapi().paths[`${API}/diagram/{id}`].get.responses[200].content)) {
    await e(200, 'GET', `${API}/diagram/${seedDiagram.id}`, { accept: type });
  }
  for (const type of Object.keys(openapi().paths[`${API}/model`].get.responses[200].content)) {
    await e(200, 'GET', `${API}/model`, { accept: type });
  }
  await e(200, 'POST', `${API}/model`, {
    body: {
      components: [{ name: 'Fraud', ref: 'fraud' }],
      diagrams: [{ name: 'Ctx', level: 'C1', componentInstances: [{ component: 'fraud' }] }],
    },
  });
  await e(200, 'POST', `${API}/model?layout=auto`, { body: { components: [{ name: 'Fraud', ref: 'fraud', desc: 'checks' }] }, yaml: true });

  // The current form.
  await e(201, 'POST', `${API}/tags`, { body: { id: 'gdpr', name: 'GDPR', color: 'blue' } });
  await e(201, 'POST', `${API}/components`, { body: { id: 'shop', name: 'Shop', typeSlug: 'software-system', tags: ['gdpr'] } });
  await e(201, 'POST', `${API}/components`, {
    body: { id: 'web', name: 'Web', typeId: container, attributes: [{ id: 'sla', value: '99.9' }] },
  });
  const created = await e(201, 'POST', `${API}/diagrams`, {
    body: {
      id: 'shop-c2',
      name: 'Shop',
      level: 'C2',
      tags: ['gdpr'],
      componentInstances: [
        { ref: 'w', componentId: 'web' },
        { ref: 's', componentId: 'shop' },
      ],
      relations: [{ fromRef: 'w', toRef: 's', label: 'calls' }],
    },
  });
  p.t.truthy(created.headers.get('location'));
  await e(200, 'GET', `${API}/tags`);
  await e(200, 'GET', `${API}/tags/gdpr`);
  await e(200, 'GET', `${API}/components?name=sh&state=DRAFT`);
  await e(200, 'GET', `${API}/components?typeId=container&tagId=pci&attributeId=${attribute.id}&attributeValue=gold`);
  await e(200, 'GET', `${API}/components?limit=2`, { yaml: true });
  await e(200, 'GET', `${API}/components/web`);
  await e(200, 'GET', `${API}/components/pay`);
  await e(200, 'GET', `${API}/diagrams?componentId=web&level=C2&tagId=gdpr`);
  await e(200, 'GET', `${API}/diagrams/shop-c2`);
  await e(200, 'GET', `${API}/diagrams/shop-c2`, { accept: 'image/svg+xml' });
  await e(200, 'GET', `${API}/diagrams/shop-c2`, { accept: 'text/vnd.likec4' });
  await e(200, 'PATCH', `${API}/tags/gdpr`, { body: { desc: 'privacy' } });
  await e(200, 'PATCH', `${API}/attributes/sla`, { body: { desc: 'uptime' } });
  // Fields a body sends that the write does not know are named in C4store-Ignored-Fields, refused or not.
  const ignoring = await e(200, 'POST', `${API}/tag`, { body: [{ name: 'Noted', color: 'red', colour: 'red' }] });
  p.t.is(ignoring.headers.get('c4store-ignored-fields'), '0.colour');
  await e(201, 'POST', `${API}/drafts`, { body: { name: 'noted', titel: 'misspelt' } });
  await e(400, 'POST', `${API}/tag`, { body: [{ nmae: 'Bad', color: 'red' }] });
  await e(200, 'PATCH', `${API}/components/web`, { body: { state: 'ACTIVE', desc: null } });
  await e(200, 'PATCH', `${API}/diagrams/shop-c2?layout=auto`, { body: { desc: 'the shop' } });
  await e(200, 'PATCH', `${API}/tags/upsert-batch`, {
    body: [
      { id: 'gdpr', color: 'green' },
      { id: 'new-tag', name: 'New', color: 'red' },
    ],
  });
  await e(200, 'PATCH', `${API}/attributes/upsert-batch`, { body: [{ id: 'sla', required: false }] });
  await e(200, 'PATCH', `${API}/components/upsert-batch`, {
    body: [
      { id: 'web', desc: 'storefront' },
      { ref: 'api', name: 'API' },
    ],
  });
  await e(200, 'PATCH', `${API}/diagrams/upsert-batch`, { body: [{ id: 'shop-c2', state: 'ACTIVE' }] });
  await e(200, 'POST', `${API}/template`, {
    body: {
      components: [{ id: 'cart', name: 'Cart' }],
      diagrams: [{ id: 'cart-c1', name: 'Cart', componentInstances: [{ componentId: 'cart' }] }],
    },
  });
  await e(200, 'GET', `${API}/search/components?name=cart`);
  await e(200, 'GET', `${API}/search/diagrams?componentId=cart`);
  await e(200, 'GET', `${API}/search/dependencies?componentId=web`);
  await e(400, 'GET', `${API}/search/components`);
  await e(200, 'GET', `${API}/components/web/dependencies`);
  await e(404, 'GET', `${API}/components/nope/dependencies`);
  await e(409, 'POST', `${API}/components`, { body: { id: 'web', name: 'Again' } });
  await e(409, 'DELETE', `${API}/components/web`);
  await e(404, 'PATCH', `${API}/components/nope`, { body: { desc: 'x' } });
  await e(400, 'POST', `${API}/components`, { body: { id: 'Bad Id', name: 'X' } });
  await e(200, 'DELETE', `${API}/tags/new-tag`);
  await e(200, 'DELETE', `${API}/attributes/sla?cascade=true`);
  await e(200, 'DELETE', `${API}/diagrams/cart-c1`);
  await e(200, 'DELETE', `${API}/components/${(await e(200, 'GET', `${API}/components/api`)).body.id}`);
  await e(201, 'POST', `${API}/tags`, { body: { id: 'old', name: 'Old', color: 'red' } });
  await e(200, 'DELETE', `${API}/tag/old`);
  await e(200, 'POST', `${API}/attribute`, { body: [{ name: 'Gone', type: 'BOOLEAN', ref: 'gone' }] });
  const gone = (await e(200, 'GET', `${API}/attributes/gone`)).body;
  await e(200, 'DELETE', `${API}/attribute/${gone.id}`);
  await e(200, 'DELETE', `${API}/component/cart?cascade=true`);
  const [doomed] = (await e(200, 'POST', `${API}/diagram`, { body: [{ name: 'Doomed', level: 'C1' }] })).body;
  await e(200, 'DELETE', `${API}/diagram/${doomed.id}`);

  // Preconditions and conditional reads.
  const tip = (await e(200, 'GET', `${API}/model`)).headers.get('etag')!;
  await e(304, 'GET', `${API}/components`, { headers: { 'if-none-match': tip } });
  await e(304, 'GET', `${API}/diagram/${seedDiagram.id}`, { headers: { 'if-none-match': tip }, accept: 'image/svg+xml' });
  await e(200, 'PATCH', `${API}/components/web`, { body: { desc: 'matched' }, headers: { 'if-match': tip } });
  await e(412, 'PATCH', `${API}/components/web`, { body: { desc: 'stale' }, headers: { 'if-match': tip } });
  await e(412, 'POST', `${API}/tag`, { body: [{ name: 'X', color: 'red' }], headers: { 'if-none-match': '*' } });

  // History, versions, revert.
  const history = (await e(200, 'GET', `${API}/history?limit=2`)).body;
  await e(200, 'GET', `${API}/history?resource=web&since=2020-01-01`);
  await e(200, 'GET', `${API}/history/${history[1].id}`);
  await e(404, 'GET', `${API}/history/0000000`);
  await e(200, 'GET', `${API}/diff?from=${history[1].id}`);
  await e(400, 'GET', `${API}/diff`);
  await e(304, 'GET', `${API}/history/${history[1].id}`, {
    headers: { 'if-none-match': (await e(200, 'GET', `${API}/history/${history[1].id}`)).headers.get('etag')! },
  });
  await e(400, 'GET', `${API}/history?limit=0`);
  await e(201, 'POST', `${API}/version`, { body: { name: 'v1' } });
  await e(201, 'POST', `${API}/versions`, { body: { name: 'v2', desc: 'second' } });
  await e(409, 'POST', `${API}/versions`, { body: { name: 'v1' } });
  await e(200, 'GET', `${API}/version`);
  await e(200, 'GET', `${API}/versions`);
  await e(200, 'GET', `${API}/components?at=v1`);
  await e(404, 'GET', `${API}/components?at=ffffffff`);
  await e(200, 'POST', `${API}/revert`, { body: { commit: history[1].id } });

  // Share links.
  const link = (await e(201, 'POST', `${API}/diagram/${seedDiagram.id}/share-links`, { body: { label: 'README' } })).body;
  await e(201, 'POST', `${API}/diagrams/shop-c2/share-links`, { raw: '' });
  await e(201, 'POST', `${API}/diagram/${seedDiagram.id}/share-links`);
  await e(200, 'GET', `${API}/diagram/${seedDiagram.id}/share-links`);
  await e(200, 'GET', `${API}/diagrams/shop-c2/share-links`);
  await e(200, 'GET', `${API}/share-links`);
  await e(200, 'GET', `${API}/share-links/${link.id}`);
  await e(404, 'POST', `${API}/diagrams/nope/share-links`, { body: {} });
  await e(400, 'POST', `${API}/diagrams/shop-c2/share-links`, { body: { label: 'x'.repeat(201) } });
  await e(200, 'DELETE', `${API}/share-links/${link.id}`);
  await e(404, 'DELETE', `${API}/share-links/${link.id}`);
  await e(400, 'GET', `${API}/share-links?draft=x`);

  // Drafts.
  await e(201, 'POST', `${API}/drafts`, { body: { name: 'pv2', title: 'Payments v2' } });
  await e(409, 'POST', `${API}/drafts`, { body: { name: 'pv2' } });
  await e(200, 'PATCH', `${API}/components/web?draft=pv2`, { body: { name: 'Web (draft)' } });
  await e(200, 'PATCH', `${API}/components/web`, { body: { name: 'Web (main)' } });
  await e(200, 'GET', `${API}/components/web?draft=pv2`);
  await e(200, 'GET', `${API}/drafts`);
  await e(200, 'GET', `${API}/drafts?state=merged`);
  await e(200, 'GET', `${API}/drafts/pv2`);
  await e(200, 'GET', `${API}/drafts/pv2/diff`);
  await e(200, 'GET', `${API}/diagrams/shop-c2?draft=pv2&compare=main`, { accept: 'image/svg+xml' });
  await e(200, 'GET', `${API}/diagram/${seedDiagram.id}?draft=pv2&compare=main&scale=0.5`, { accept: 'image/png' });
  await e(400, 'GET', `${API}/diagrams/shop-c2?draft=pv2&compare=main`);
  const conflicting = await e(409, 'POST', `${API}/drafts/pv2/merge`, { body: {} });
  p.t.is(conflicting.body.conflicts[0].field, 'name');
  await e(409, 'POST', `${API}/drafts/pv2/update`, { yaml: true });
  await e(200, 'POST', `${API}/drafts/pv2/update`, {
    body: { resolutions: [{ kind: 'component', id: 'web', field: 'name', take: 'draft' }] },
  });
  await e(200, 'GET', `${API}/changes?draft=pv2`);
  await e(200, 'POST', `${API}/drafts/pv2/merge`);
  await e(404, 'GET', `${API}/drafts/nope`);
  await e(201, 'POST', `${API}/drafts`, { body: { name: 'later' } });
  await e(200, 'DELETE', `${API}/drafts/later`);
  await e(409, 'POST', `${API}/tag?draft=later`, { body: [{ name: 'Late', color: 'red' }] });
  await e(200, 'POST', `${API}/drafts/later/reopen`);
  await e(404, 'GET', `${API}/components?draft=nope`);
  // A merged draft takes no more writes, on every route that writes to one.
  await e(409, 'POST', `${API}/tag?draft=pv2`, { body: [{ name: 'Late', color: 'red' }] });
  await e(409, 'PUT', `${API}/component?draft=pv2`, { body: [{ name: 'Late' }] });
  await e(409, 'POST', `${API}/diagram?draft=pv2`, { body: [{ name: 'Late', level: 'C1' }] });
  await e(409, 'PUT', `${API}/attributes?draft=pv2`, { body: [{ name: 'Late', type: 'STRING' }] });
  await e(409, 'POST', `${API}/model?draft=pv2`, { body: { components: [{ name: 'Late' }] } });
  await e(409, 'POST', `${API}/revert?draft=pv2`, { body: { commit: (await e(200, 'GET', `${API}/drafts/pv2`)).body.head } });
  await e(409, 'DELETE', `${API}/drafts/pv2`);
  await e(409, 'POST', `${API}/drafts/later/reopen`);
  await e(400, 'GET', `${API}/drafts?state=bad`);
  await e(201, 'POST', `${API}/drafts`, { body: { name: 'race' } });
  await e(200, 'PATCH', `${API}/components/web?draft=race`, { body: { desc: 'race' } });
  await e(200, 'POST', `${API}/drafts/race/update`, { raw: '' });
  const mainTip = (await e(200, 'GET', `${API}/model`)).headers.get('etag')!;
  await e(200, 'PATCH', `${API}/components/shop`, { body: { desc: 'moved on' } });
  await e(412, 'POST', `${API}/drafts/race/merge`, { headers: { 'if-match': mainTip } });
  await e(412, 'POST', `${API}/versions`, { body: { name: 'v3' }, headers: { 'if-match': mainTip } });
  await e(304, 'GET', `${API}/drafts/race/diff`, {
    headers: { 'if-none-match': (await e(200, 'GET', `${API}/drafts/race/diff`)).headers.get('etag')! },
  });
  await e(400, 'POST', `${API}/versions?draft=race`, { body: { name: 'v4' } });

  // Change feed, events, webhooks.
  const changes = (await e(200, 'GET', `${API}/changes?limit=2`)).body;
  await e(200, 'GET', `${API}/changes?after=${changes.changes[0].id}`);
  await e(404, 'GET', `${API}/changes?after=ffffffff`);
  await e(200, 'GET', `${API}/events`);
  await e(200, 'GET', `${API}/events`, { headers: { 'last-event-id': changes.changes[0].id } });
  await e(404, 'GET', `${API}/events`, { headers: { 'last-event-id': 'ffffffff' } });
  const hook = (await e(201, 'POST', `${API}/webhooks`, { body: { url: 'https://203.0.113.7/hook' } })).body;
  await e(200, 'GET', `${API}/webhooks`);
  await e(200, 'GET', `${API}/webhooks/${hook.id}`);
  await e(200, 'GET', `${API}/webhooks/${hook.id}/deliveries?limit=5`);
  await e(403, 'GET', `${API}/webhooks`, { key: s.readerKey });
  await e(403, 'GET', `${API}/webhooks/${hook.id}`, { key: s.readerKey });
  await e(403, 'GET', `${API}/webhooks/${hook.id}/deliveries`, { key: s.readerKey });
  for (let i = 1; i < 20; i++) await e(201, 'POST', `${API}/webhooks`, { body: { url: `https://203.0.113.7/hook/${i}` } });
  await e(409, 'POST', `${API}/webhooks`, { body: { url: 'https://203.0.113.7/one-too-many' } });
  await e(200, 'POST', `${API}/webhooks/${hook.id}/replay`, { body: { after: changes.changes[0].id } });
  await e(400, 'POST', `${API}/webhooks`, { body: { url: 'http://127.0.0.1/hook' } });
  await e(200, 'DELETE', `${API}/webhooks/${hook.id}`);
  await e(404, 'GET', `${API}/webhooks/${hook.id}`);

  // Refusals every operation shares.
  await e(401, 'GET', `${API}/components`, { key: null });
  await e(401, 'GET', `${API}/components`, { key: 'c4s_wrong' });
  await e(403, 'POST', `${API}/components`, { key: s.readerKey, body: { name: 'X' } });
  await e(403, 'POST', `${API}/drafts`, { key: s.readerKey, body: { name: 'x' } });
  await e(200, 'GET', `${API}/drafts`, { key: s.readerKey });
  await e(415, 'POST', `${API}/tag`, { raw: 'x', headers: { 'content-type': 'text/plain' } });
  await e(400, 'POST', `${API}/tag`, { raw: '{', headers: { 'content-type': 'application/json' } });
  await e(400, 'POST', `${API}/tag`, { raw: 'a: [', headers: { 'content-type': 'application/yaml' }, yaml: true });
  await e(413, 'POST', `${API}/model`, { raw: JSON.stringify({ components: [{ name: 'x'.repeat(300_000) }] }) });
  await e(405, 'DELETE', `${API}/tag`);
  await e(405, 'PUT', `${API}/components/web`, { body: {} });
  await e(404, 'GET', `${API}/nothing-here`);
}

test('every exchange of a broad scenario is one the OpenAPI document describes truly', async (t) => {
  const s = await TestServer.start({ bodyLimit: 200_000 });
  const p = new Probe(t, s);
  try {
    await scenario(p);
  } finally {
    await s.close();
  }
  t.deepEqual(p.wrong, [], p.wrong.join('\n'));
  t.deepEqual(p.problems, [], p.problems.join('\n'));
  // Every operation of the document was seen to succeed.
  const document = openapi();
  const unseen: string[] = [];
  for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, { operationId: string }>>)) {
    for (const [method, operation] of Object.entries(operations)) {
      const statuses = p.seen.get(operation.operationId) ?? new Set();
      if (![...statuses].some((status) => status >= 200 && status < 300)) unseen.push(`${method.toUpperCase()} ${path}`);
    }
  }
  t.deepEqual(unseen, [], 'operations the scenario never saw succeed');
});

test('429 with Retry-After, as every keyed operation declares it', async (t) => {
  const s = await TestServer.start({ readsPerMinute: 2, writesPerMinute: 1 });
  const p = new Probe(t, s);
  try {
    await p.expect(200, 'GET', `${API}/tags`);
    await p.expect(200, 'GET', `${API}/tags`);
    const refused = await p.expect(429, 'GET', `${API}/tags`);
    t.regex(refused.headers.get('retry-after') ?? '', /^\d+$/);
    await p.expect(201, 'POST', `${API}/tags`, { body: { name: 'T', color: 'red' } });
    await p.expect(429, 'POST', `${API}/tags`, { body: { name: 'T2', color: 'red' } });
    await p.expect(429, 'GET', `${API}/events`);
  } finally {
    await s.close();
  }
  t.deepEqual(p.wrong, [], p.wrong.join('\n'));
  t.deepEqual(p.problems, [], p.problems.join('\n'));
});

test('the document itself: operationIds unique, every $ref resolves, every example fits its own schema', async (t) => {
  const { Ajv2020 } = await import('ajv/dist/2020.js');
  const document = openapi();
  const ids = Object.values(document.paths as Record<string, Record<string, { operationId: string }>>).flatMap((operations) =>
    Object.values(operations).map((o) => o.operationId),
  );
  t.is(new Set(ids).size, ids.length, 'operationIds are unique');
  t.true(
    ids.every((id) => /^[A-Za-z][A-Za-z0-9]*$/.test(id)),
    'operationIds are identifiers in every generator',
  );
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(document, 'openapi.json');
  const refs: string[] = [];
  const examples: Array<{ at: string[]; value: unknown }> = [];
  const walk = (node: unknown, at: string[]) => {
    if (Array.isArray(node)) {
      for (const [i, child] of node.entries()) walk(child, [...at, String(i)]);
    } else if (node !== null && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      if (typeof record.$ref === 'string') refs.push(record.$ref);
      // A media type's or a parameter's example beside its schema; a schema's own `examples`.
      if ('example' in record && 'schema' in record) examples.push({ at: [...at, 'schema'], value: record.example });
      for (const example of Object.values((record.examples ?? {}) as Record<string, { value?: unknown }>))
        if ('schema' in record && example && typeof example === 'object' && 'value' in example)
          examples.push({ at: [...at, 'schema'], value: example.value });
      if (Array.isArray(record.examples) && ('type' in record || 'properties' in record))
        for (const value of record.examples) examples.push({ at, value });
      for (const [name, child] of Object.entries(record)) walk(child, [...at, name]);
    }
  };
  walk(document, []);
  t.true(refs.length > 40);
  for (const ref of new Set(refs)) {
    t.true(ref.startsWith('#/'), ref);
    let node: unknown = document;
    for (const step of ref.slice(2).split('/'))
      node = (node as Record<string, unknown> | undefined)?.[step.replace(/~1/g, '/').replace(/~0/g, '~')];
    t.not(node, undefined, `${ref} resolves`);
  }
  for (const { at, value } of examples) {
    const pointer = at.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');
    const validate = ajv.compile({ $ref: `openapi.json#/${pointer}` });
    t.true(validate(value), `the example at ${at.join('.')}: ${JSON.stringify(validate.errors)}`);
  }
});

/** The document's verdict on a request and the server's: it allows it exactly when the server takes it (2xx). */
async function agreeOn(t: ExecutionContext, s: TestServer, method: string, path: string, body: unknown): Promise<void> {
  const objections = documentObjections(method, `${API}${path}`, body);
  const reply = await s.request(method, `${API}${path}`, { body });
  const served = reply.status >= 200 && reply.status < 300;
  t.is(
    objections?.length === 0,
    served,
    `${method} ${path} ${JSON.stringify(body)}: the server answered ${reply.status} ${reply.text.slice(0, 200)}; the document ${objections?.length === 0 ? 'allows it' : `refuses it: ${objections?.join('; ')}`}`,
  );
}

test('a create of the current form takes ref: null as no ref, and so does the document', async (t) => {
  const s = await TestServer.start();
  try {
    await agreeOn(t, s, 'POST', '/tags', { name: 'T', color: 'red', ref: null });
    await agreeOn(t, s, 'POST', '/attributes', { name: 'A', type: 'STRING', ref: null });
    await agreeOn(t, s, 'POST', '/components', { name: 'C', ref: null });
    await agreeOn(t, s, 'POST', '/diagrams', { name: 'D', ref: null });
    t.is((await s.get(`${API}/components`)).body[0].ref ?? null, null, 'no ref');
    // The seed's forms refuse it, and so does the document.
    await agreeOn(t, s, 'POST', '/component', [{ name: 'C', ref: null }]);
    await agreeOn(t, s, 'POST', '/tag', [{ name: 'T', color: 'red', ref: null }]);
  } finally {
    await s.close();
  }
});
