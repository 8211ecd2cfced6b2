/**
 * Writes sample-repo/: the demo organization's model (an online shop) as the folder of YAML
 * files a model repository holds. Run with `npx tsx scripts/make-sample-repo.ts`.
 *
 * The files are written by the service's own serializer (fileOf in src/model/files.ts), so they
 * are byte for byte what c4store itself would commit. Ids are derived from fixed creation times
 * and a hash of a symbolic key, so re-running the script reproduces the same files; they have the
 * shape of ids made by newId (10 characters of time, 16 of randomness) and sort in creation order.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DIRECTORIES, resourcePath, serialize, serializeOrganization, type StoredKind } from '../src/model/files.js';
import { idFrom } from '../src/model/ids.js';
import { DEFAULT_TYPES } from '../src/service/orgs.js';
import type {
  Attribute,
  AttributeType,
  AttributeValueType,
  Component,
  ComponentInstance,
  ComponentType,
  Diagram,
  Level,
  Organization,
  Relation,
  State,
  Tag,
  TagColor,
  TextArea,
} from '../src/model/types.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', 'sample-repo');

// ---------------------------------------------------------------------------------------------
// Ids: time prefix (creation time in ms) + 80 bits from a hash of the key.

const ids = new Map<string, string>();
function makeId(key: string, time: number): string {
  if (ids.has(key)) throw new Error(`duplicate key ${key}`);
  const random = BigInt('0x' + createHash('sha256').update(`c4store-sample/${key}`).digest('hex').slice(0, 20)) >> 1n;
  const id = idFrom(time, random);
  ids.set(key, id);
  return id;
}
function idOf(key: string): string {
  const id = ids.get(key);
  if (!id) throw new Error(`unknown key ${key}`);
  return id;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2025, 2, 3, 9, 0, 0); // Monday 3 March 2025, 09:00 UTC

// ---------------------------------------------------------------------------------------------
// Organization

const MEMBERS = {
  anna: 'anna.berg@northwind.example', // head of engineering
  marco: 'marco.rossi@northwind.example', // storefront
  priya: 'priya.nair@northwind.example', // checkout & payments
  jonas: 'jonas.weber@northwind.example', // platform
  lena: 'lena.vogel@northwind.example', // catalog & back office
};
const organization: Organization = { name: 'Northwind Traders', slug: 'demo', members: Object.values(MEMBERS) };

// ---------------------------------------------------------------------------------------------
// Types (the C4 set org create seeds)

const types: ComponentType[] = DEFAULT_TYPES.map(([slug, name], i) => ({
  id: makeId(`type/${slug}`, T0 + i * 7),
  slug,
  name,
}));
const typeIdOf = (slug: string) => types.find((t) => t.slug === slug)!.id;

// ---------------------------------------------------------------------------------------------
// Tags

const TAG_DEFS: Array<[key: string, name: string, color: TagColor, desc: string | null]> = [
  ['core', 'Core', 'blue', 'Built and run by Northwind engineering.'],
  ['customer-facing', 'Customer-facing', 'green', 'Seen by shoppers; changes need a UX review.'],
  ['payments', 'Payments', 'orange', 'Touches the payment flow.'],
  ['pci', 'PCI scope', 'red', 'In scope of the PCI DSS assessment: changes need a security review.'],
  ['event-driven', 'Event-driven', 'purple', 'Communicates through the order events topic.'],
  ['wip', 'Work in progress', 'yellow', 'Not yet reviewed by the architecture group.'],
  ['legacy', 'Legacy', 'gray', null],
];
const tags: Tag[] = TAG_DEFS.map(([key, name, color, desc], i) => ({
  id: makeId(`tag/${key}`, T0 + DAY + i * 2 * MINUTE),
  name,
  desc,
  color,
}));

// ---------------------------------------------------------------------------------------------
// Attributes

interface AttributeDef {
  key: string;
  name: string;
  type: AttributeType;
  desc: string | null;
  required?: boolean;
  forTypes?: string[];
  list?: string[];
}
const ATTRIBUTE_DEFS: AttributeDef[] = [
  { key: 'owner', name: 'Owner', type: 'USERLIST', desc: 'The person accountable for this element.' },
  {
    key: 'team',
    name: 'Team',
    type: 'LIST',
    required: true,
    forTypes: ['container', 'database', 'queue'],
    desc: 'The team that builds and runs it. Every deployable unit must have one.',
    list: ['Storefront', 'Checkout', 'Catalog', 'Platform', 'Back Office'],
  },
  { key: 'technology', name: 'Technology', type: 'STRING', desc: 'Languages, frameworks and products.' },
  {
    key: 'repository',
    name: 'Repository',
    type: 'LINK',
    forTypes: ['container', 'component'],
    desc: 'Where the source code lives.',
  },
  { key: 'docs', name: 'Documentation', type: 'LINK', desc: 'Runbook, API reference or vendor documentation.' },
  {
    key: 'criticality',
    name: 'Criticality',
    type: 'LIST',
    forTypes: ['software-system', 'container', 'database', 'queue'],
    desc: 'How bad an outage is; drives the on-call and backup policy.',
    list: ['low', 'medium', 'high', 'business-critical'],
  },
  {
    key: 'personal-data',
    name: 'Handles personal data',
    type: 'BOOLEAN',
    desc: 'Stores or processes personal data of customers (GDPR record of processing).',
  },
  {
    key: 'cost',
    name: 'Monthly cost (EUR)',
    type: 'NUMBER',
    forTypes: ['software-system', 'container', 'database', 'queue'],
    desc: 'Average monthly running cost over the last quarter.',
  },
  { key: 'replicas', name: 'Replicas', type: 'NUMBER', forTypes: ['container'], desc: 'Instances running in production.' },
];
const attributes: Attribute[] = ATTRIBUTE_DEFS.map((a, i) => ({
  id: makeId(`attribute/${a.key}`, T0 + DAY + HOUR + i * 3 * MINUTE),
  name: a.name,
  type: a.type,
  desc: a.desc,
  required: a.required ?? false,
  forTypes: a.forTypes ?? [],
  ...(a.list ? { list: a.list } : {}),
}));
const ATTRIBUTE_ORDER = ATTRIBUTE_DEFS.map((a) => a.key);

// ---------------------------------------------------------------------------------------------
// Components

type Values = Partial<Record<(typeof ATTRIBUTE_DEFS)[number]['key'], AttributeValueType>>;
interface ComponentDef {
  key: string;
  name: string;
  type: string;
  state?: State;
  desc: string | null;
  linksTo?: string[];
  values?: Values;
}

const GIT = 'https://git.northwind.example/shop';
const WIKI = 'https://wiki.northwind.example';

const COMPONENT_DEFS: ComponentDef[] = [
  // People
  {
    key: 'customer',
    name: 'Customer',
    type: 'person',
    desc: 'Shops online: browses the catalog, fills a cart, pays and tracks orders.',
    linksTo: ['shop', 'web-shop'],
    values: { docs: `${WIKI}/personas/customer` },
  },
  {
    key: 'support-agent',
    name: 'Customer Support Agent',
    type: 'person',
    desc: 'Answers customer questions, looks up orders and issues refunds.',
    linksTo: ['support-desk', 'shop', 'back-office'],
    values: { docs: `${WIKI}/personas/support-agent` },
  },
  {
    key: 'catalog-manager',
    name: 'Catalog Manager',
    type: 'person',
    desc: 'Maintains products, categories, images and prices.',
    linksTo: ['shop', 'back-office'],
    values: { docs: '' },
  },
  {
    key: 'warehouse-clerk',
    name: 'Warehouse Clerk',
    type: 'person',
    desc: 'Picks, packs and ships orders from the Rotterdam warehouse.',
    linksTo: ['erp'],
  },
  // Software systems
  {
    key: 'shop',
    name: 'Northwind Shop',
    type: 'software-system',
    desc: 'The online shop: storefront, checkout, order handling and the back office for the catalog.',
    linksTo: ['payment', 'email', 'erp', 'support-desk'],
    values: {
      owner: MEMBERS.anna,
      technology: 'TypeScript, Kotlin, PostgreSQL, Kafka on Kubernetes',
      docs: `${WIKI}/shop`,
      criticality: 'business-critical',
      'personal-data': true,
      cost: 4180,
    },
  },
  {
    key: 'payment',
    name: 'Payment Provider',
    type: 'software-system',
    desc: 'PayFlow, the external payment service provider: cards, PayPal and iDEAL. Holds all card data.',
    values: {
      owner: MEMBERS.priya,
      technology: 'PayFlow REST API v3, webhooks',
      docs: 'https://docs.payflow.example/api/v3',
      criticality: 'business-critical',
      'personal-data': true,
      cost: 2650.4,
    },
  },
  {
    key: 'erp',
    name: 'ERP System',
    type: 'software-system',
    desc: 'Inventory, fulfilment and invoicing. Run on premises by the finance IT department.',
    linksTo: ['carrier'],
    values: {
      owner: MEMBERS.jonas,
      technology: 'SAP S/4HANA',
      docs: `${WIKI}/erp-integration`,
      criticality: 'high',
      'personal-data': true,
    },
  },
  {
    key: 'email',
    name: 'E-mail Service',
    type: 'software-system',
    desc: 'Transactional e-mail delivery (SaaS): order confirmations, shipping notices, password resets.',
    values: {
      owner: MEMBERS.jonas,
      technology: 'Postbox SMTP relay',
      docs: 'https://docs.postbox.example',
      criticality: 'medium',
      'personal-data': true,
      cost: 89,
    },
  },
  {
    key: 'support-desk',
    name: 'Support Desk',
    type: 'software-system',
    desc: 'Ticketing tool of the customer support team (SaaS).',
    values: { owner: MEMBERS.lena, docs: '', criticality: 'medium', 'personal-data': true, cost: 540 },
  },
  {
    key: 'carrier',
    name: 'Parcel Carrier',
    type: 'software-system',
    state: 'DRAFT',
    desc: 'Shipping labels and parcel tracking. Integration with the ERP planned for Q3.',
    values: { owner: null, criticality: 'high', 'personal-data': true },
  },
  {
    key: 'legacy-shop',
    name: 'Northwind Shop v1',
    type: 'software-system',
    state: 'ARCHIVED',
    desc: 'The PHP monolith that the current shop replaced in 2024. Read-only until the retention period of its order data ends.',
    values: { owner: MEMBERS.anna, technology: 'PHP 7, MySQL', criticality: 'low', 'personal-data': true, cost: 120 },
  },
  // Containers of the shop
  {
    key: 'web-shop',
    name: 'Web Shop',
    type: 'container',
    desc: 'The storefront customers use: server-rendered web app for desktop and mobile browsers.',
    linksTo: ['shop-api'],
    values: {
      owner: MEMBERS.marco,
      team: 'Storefront',
      technology: 'TypeScript, Next.js',
      repository: `${GIT}/web-shop`,
      criticality: 'business-critical',
      'personal-data': false,
      cost: 310,
      replicas: 4,
    },
  },
  {
    key: 'back-office',
    name: 'Back Office UI',
    type: 'container',
    desc: 'Single-page app for the catalog and support teams: products, prices, orders, refunds.',
    linksTo: ['shop-api'],
    values: {
      owner: MEMBERS.lena,
      team: 'Back Office',
      technology: 'TypeScript, React',
      repository: `${GIT}/back-office`,
      criticality: 'medium',
      'personal-data': true,
      cost: 35,
      replicas: 2,
    },
  },
  {
    key: 'shop-api',
    name: 'Shop API',
    type: 'container',
    desc: 'Backend for the web shop and the back office: sessions, carts, checkout; calls the services behind it.',
    linksTo: ['catalog-service', 'order-service', 'shop-db', 'payment'],
    values: {
      owner: MEMBERS.priya,
      team: 'Checkout',
      technology: 'TypeScript, Node.js, Koa',
      repository: `${GIT}/shop-api`,
      docs: `${WIKI}/shop-api/runbook`,
      criticality: 'business-critical',
      'personal-data': true,
      cost: 520,
      replicas: 6,
    },
  },
  {
    key: 'catalog-service',
    name: 'Catalog Service',
    type: 'container',
    desc: 'Products, categories, prices and stock levels; imports stock from the ERP every 15 minutes.',
    linksTo: ['catalog-db', 'search-index', 'erp'],
    values: {
      owner: MEMBERS.lena,
      team: 'Catalog',
      technology: 'Kotlin, Spring Boot',
      repository: `${GIT}/catalog-service`,
      criticality: 'high',
      'personal-data': false,
      cost: 240,
      replicas: 3,
    },
  },
  {
    key: 'order-service',
    name: 'Order Service',
    type: 'container',
    desc: 'Owns orders from placement to delivery; hands paid orders to the ERP for fulfilment.',
    linksTo: ['order-db', 'order-events', 'erp'],
    values: {
      owner: MEMBERS.priya,
      team: 'Checkout',
      technology: 'Kotlin, Spring Boot',
      repository: `${GIT}/order-service`,
      docs: `${WIKI}/order-service/runbook`,
      criticality: 'business-critical',
      'personal-data': true,
      cost: 275,
      replicas: 3,
    },
  },
  {
    key: 'notification-worker',
    name: 'Notification Worker',
    type: 'container',
    desc: 'Turns order events into customer e-mails.',
    linksTo: ['order-events', 'email'],
    values: {
      owner: MEMBERS.jonas,
      team: 'Platform',
      technology: 'TypeScript, Node.js',
      repository: `${GIT}/notification-worker`,
      criticality: 'medium',
      'personal-data': true,
      cost: 18.5,
      replicas: 1,
    },
  },
  {
    key: 'shop-db',
    name: 'Shop Database',
    type: 'database',
    desc: 'Customer accounts, addresses, sessions and carts.',
    values: {
      owner: MEMBERS.priya,
      team: 'Checkout',
      technology: 'PostgreSQL 16 (managed)',
      criticality: 'business-critical',
      'personal-data': true,
      cost: 380,
    },
  },
  {
    key: 'catalog-db',
    name: 'Catalog Database',
    type: 'database',
    desc: 'Products, categories, prices and the stock levels mirrored from the ERP.',
    values: {
      owner: MEMBERS.lena,
      team: 'Catalog',
      technology: 'PostgreSQL 16 (managed)',
      criticality: 'high',
      'personal-data': false,
      cost: 190,
    },
  },
  {
    key: 'order-db',
    name: 'Order Database',
    type: 'database',
    desc: 'Orders, order lines, payments and shipments.',
    values: {
      owner: MEMBERS.priya,
      team: 'Checkout',
      technology: 'PostgreSQL 16 (managed)',
      criticality: 'business-critical',
      'personal-data': true,
      cost: 410,
    },
  },
  {
    key: 'search-index',
    name: 'Search Index',
    type: 'database',
    state: 'DRAFT',
    desc: 'Full-text product search with facets; to replace the SQL LIKE queries of the Catalog Service.',
    values: { owner: MEMBERS.lena, team: 'Catalog', technology: 'OpenSearch 2', criticality: 'medium', 'personal-data': false },
  },
  {
    key: 'order-events',
    name: 'Order Events',
    type: 'queue',
    desc: 'Kafka topic orders.v1: OrderPlaced, OrderPaid, OrderShipped, OrderCancelled.',
    values: {
      owner: MEMBERS.jonas,
      team: 'Platform',
      technology: 'Apache Kafka (managed)',
      docs: `${WIKI}/events/orders-v1`,
      criticality: 'high',
      'personal-data': true,
      cost: 150,
    },
  },
  // Components of the Shop API
  {
    key: 'catalog-controller',
    name: 'Catalog Controller',
    type: 'component',
    desc: 'GET /products, /products/{id}, /categories: reads through the Catalog Service client, cached for 60 s.',
    linksTo: ['catalog-client'],
    values: {
      owner: MEMBERS.marco,
      technology: 'TypeScript, Koa router',
      repository: `${GIT}/shop-api/-/tree/main/src/catalog`,
      'personal-data': false,
    },
  },
  {
    key: 'cart-controller',
    name: 'Cart Controller',
    type: 'component',
    desc: 'GET/PUT /cart and /cart/items: the shopping cart of the session or the signed-in customer.',
    linksTo: ['cart-repo'],
    values: {
      owner: MEMBERS.marco,
      technology: 'TypeScript, Koa router',
      repository: `${GIT}/shop-api/-/tree/main/src/cart`,
      'personal-data': true,
    },
  },
  {
    key: 'checkout-controller',
    name: 'Checkout Controller',
    type: 'component',
    desc: 'POST /checkout: validates the cart, prices it, creates the payment and submits the order.',
    linksTo: ['cart-repo', 'payment-client', 'order-client'],
    values: {
      owner: MEMBERS.priya,
      technology: 'TypeScript, Koa router',
      repository: `${GIT}/shop-api/-/tree/main/src/checkout`,
      docs: `${WIKI}/shop-api/checkout-flow`,
      'personal-data': true,
    },
  },
  {
    key: 'account-controller',
    name: 'Account Controller',
    type: 'component',
    desc: 'Sign-up, sign-in, addresses and the order history of a customer.',
    linksTo: ['session-manager', 'customer-repo', 'order-client'],
    values: {
      owner: MEMBERS.marco,
      technology: 'TypeScript, Koa router',
      repository: `${GIT}/shop-api/-/tree/main/src/account`,
      'personal-data': true,
    },
  },
  {
    key: 'session-manager',
    name: 'Session Manager',
    type: 'component',
    state: 'DRAFT',
    desc: 'Issues and checks session tokens. Being rewritten from cookie sessions to OAuth 2 with PKCE.',
    linksTo: ['customer-repo'],
    values: { owner: MEMBERS.jonas, technology: 'TypeScript, jose', repository: '', 'personal-data': true },
  },
  {
    key: 'catalog-client',
    name: 'Catalog Service Client',
    type: 'component',
    desc: 'Typed HTTP client for the Catalog Service, with retries and a circuit breaker.',
    linksTo: ['catalog-service'],
    values: {
      owner: MEMBERS.lena,
      technology: 'TypeScript, undici',
      repository: `${GIT}/shop-api/-/tree/main/src/clients/catalog`,
      'personal-data': false,
    },
  },
  {
    key: 'payment-client',
    name: 'Payment Gateway Client',
    type: 'component',
    desc: 'Wraps the PayFlow API: payment intents, captures, refunds and webhook signature checks.',
    linksTo: ['payment'],
    values: {
      owner: MEMBERS.priya,
      technology: 'TypeScript, PayFlow SDK',
      repository: `${GIT}/shop-api/-/tree/main/src/clients/payflow`,
      docs: 'https://docs.payflow.example/sdk/node',
      'personal-data': true,
    },
  },
  {
    key: 'cart-repo',
    name: 'Cart Repository',
    type: 'component',
    desc: 'Reads and writes carts and cart items in the Shop Database.',
    linksTo: ['shop-db'],
    values: {
      owner: MEMBERS.marco,
      technology: 'TypeScript, Kysely',
      repository: `${GIT}/shop-api/-/tree/main/src/cart`,
      'personal-data': true,
    },
  },
  {
    key: 'order-client',
    name: 'Order Service Client',
    type: 'component',
    desc: 'Typed HTTP client for the Order Service: submit orders, read order history.',
    linksTo: ['order-service'],
    values: {
      owner: MEMBERS.priya,
      technology: 'TypeScript, undici',
      repository: `${GIT}/shop-api/-/tree/main/src/clients/orders`,
      'personal-data': true,
    },
  },
  {
    key: 'customer-repo',
    name: 'Customer Repository',
    type: 'component',
    desc: 'Reads and writes customer accounts and addresses in the Shop Database.',
    linksTo: ['shop-db'],
    values: {
      owner: MEMBERS.marco,
      technology: 'TypeScript, Kysely',
      repository: `${GIT}/shop-api/-/tree/main/src/account`,
      'personal-data': true,
    },
  },
];

const COMPONENT_KEYS = new Set(COMPONENT_DEFS.map((c) => c.key));
for (const [i, c] of COMPONENT_DEFS.entries()) makeId(`component/${c.key}`, T0 + 2 * DAY + i * 4 * MINUTE);
const componentId = (key: string) => {
  if (!COMPONENT_KEYS.has(key)) throw new Error(`unknown component ${key}`);
  return idOf(`component/${key}`);
};
const attributeId = (key: string) => idOf(`attribute/${key}`);

const components: Component[] = COMPONENT_DEFS.map((c) => ({
  id: componentId(c.key),
  ref: c.key,
  name: c.name,
  desc: c.desc,
  state: c.state ?? 'ACTIVE',
  typeId: typeIdOf(c.type),
  linksTo: (c.linksTo ?? []).map(componentId),
  attributes: Object.entries(c.values ?? {})
    .sort(([a], [b]) => ATTRIBUTE_ORDER.indexOf(a) - ATTRIBUTE_ORDER.indexOf(b))
    .map(([key, value]) => ({ id: attributeId(key), value: value! })),
}));

// ---------------------------------------------------------------------------------------------
// Diagrams

interface BoxDef {
  ref: string;
  /** Component key, or null for a placeholder. */
  component: string | null;
  placeholder?: string;
  container?: boolean;
  parent?: string;
  x: number;
  y: number;
  w: number;
  h: number;
}
interface RelationDef {
  from: string;
  to: string;
  label: string | null;
  desc?: string;
  linksTo?: string[];
}
interface DiagramDef {
  key: string;
  name: string;
  desc: string;
  state: State;
  level: Level;
  tags: string[];
  boxes: BoxDef[];
  notes: Array<{ x: number; y: number; w: number; text: string }>;
  relations: RelationDef[];
}

const box = (ref: string, component: string | null, x: number, y: number, w = 18, h = 8, extra: Partial<BoxDef> = {}): BoxDef => ({
  ref,
  component,
  x,
  y,
  w,
  h,
  ...extra,
});
const child = (parent: string, ref: string, component: string | null, x: number, y: number, w = 18, h = 8, extra: Partial<BoxDef> = {}) =>
  box(ref, component, x, y, w, h, { parent, ...extra });

const DIAGRAM_DEFS: DiagramDef[] = [
  {
    key: 'shop-context',
    name: 'Northwind Shop - System Context',
    desc: 'Who uses the shop and which outside systems it depends on.',
    state: 'ACTIVE',
    level: 'C1',
    tags: ['core', 'customer-facing'],
    boxes: [
      box('customer', 'customer', 0, 0),
      box('catalog-manager', 'catalog-manager', 24, 0),
      box('support-agent', 'support-agent', 48, 0),
      box('warehouse-clerk', 'warehouse-clerk', 76, 0),
      box('shop', 'shop', 22, 20, 20, 10),
      box('erp', 'erp', 76, 20),
      box('payment', 'payment', 0, 40),
      box('email', 'email', 23, 40),
      box('support-desk', 'support-desk', 48, 40),
      box('carrier', 'carrier', 76, 40),
    ],
    notes: [
      {
        x: 0,
        y: 54,
        w: 64,
        text: 'Only Northwind Shop is built in-house; the other systems are\nrun by partners or by finance IT. Parcel Carrier: planned.',
      },
    ],
    relations: [
      { from: 'customer', to: 'shop', label: 'Browses products and places orders', linksTo: ['shop-containers'] },
      { from: 'catalog-manager', to: 'shop', label: 'Maintains products and prices', linksTo: ['shop-containers'] },
      { from: 'support-agent', to: 'shop', label: 'Looks up orders, issues refunds', linksTo: ['shop-containers'] },
      { from: 'support-agent', to: 'support-desk', label: 'Answers tickets in' },
      { from: 'shop', to: 'support-desk', label: 'Opens tickets for failed orders' },
      {
        from: 'shop',
        to: 'payment',
        label: 'Takes payments via',
        desc: 'REST calls and signed webhooks. Card numbers never reach Northwind systems.',
      },
      { from: 'shop', to: 'email', label: 'Sends order e-mails via' },
      {
        from: 'shop',
        to: 'erp',
        label: 'Sends paid orders, reads stock levels',
        desc: 'Nightly full stock import plus a delta every 15 minutes.',
      },
      { from: 'warehouse-clerk', to: 'erp', label: 'Picks and ships orders with' },
      { from: 'erp', to: 'carrier', label: 'Books shipments with' },
    ],
  },
  {
    key: 'shop-containers',
    name: 'Northwind Shop - Containers',
    desc: 'The deployable parts of the shop and the data stores they own.',
    state: 'ACTIVE',
    level: 'C2',
    tags: ['core', 'event-driven'],
    boxes: [
      box('customer', 'customer', 2, 0),
      box('catalog-manager', 'catalog-manager', 24, 0),
      box('support-agent', 'support-agent', 46, 0),
      box('shop', 'shop', 0, 14, 88, 36, { container: true }),
      child('shop', 'web-shop', 'web-shop', 2, 16),
      child('shop', 'back-office', 'back-office', 24, 16),
      child('shop', 'shop-db', 'shop-db', 46, 16),
      child('shop', 'notification-worker', 'notification-worker', 68, 16),
      child('shop', 'catalog-service', 'catalog-service', 2, 28),
      child('shop', 'shop-api', 'shop-api', 24, 28),
      child('shop', 'order-service', 'order-service', 46, 28),
      child('shop', 'order-events', 'order-events', 68, 28),
      child('shop', 'catalog-db', 'catalog-db', 2, 40),
      child('shop', 'order-db', 'order-db', 46, 40),
      box('email', 'email', 100, 16),
      box('erp', 'erp', 100, 48),
      box('payment', 'payment', 24, 58),
    ],
    notes: [
      {
        x: 46,
        y: 58,
        w: 52,
        text: 'Runs on the shared Kubernetes cluster (eu-central).\nDatabases: managed PostgreSQL, daily backups.',
      },
    ],
    relations: [
      { from: 'customer', to: 'web-shop', label: 'Shops with (HTTPS)' },
      { from: 'catalog-manager', to: 'back-office', label: 'Edits products and prices' },
      { from: 'support-agent', to: 'back-office', label: 'Looks up orders, issues refunds' },
      { from: 'web-shop', to: 'shop-api', label: 'JSON/HTTPS', linksTo: ['shop-api-components'] },
      { from: 'back-office', to: 'shop-api', label: 'Admin API, JSON/HTTPS', linksTo: ['shop-api-components'] },
      { from: 'shop-api', to: 'shop-db', label: 'Reads and writes (SQL)' },
      { from: 'shop-api', to: 'catalog-service', label: 'Reads products (JSON/HTTP)' },
      { from: 'shop-api', to: 'order-service', label: 'Submits orders (JSON/HTTP)' },
      { from: 'shop-api', to: 'payment', label: 'Creates payments (REST)', linksTo: ['checkout-controller-code'] },
      { from: 'catalog-service', to: 'catalog-db', label: 'Reads and writes (SQL)' },
      { from: 'order-service', to: 'order-db', label: 'Reads and writes (SQL)' },
      { from: 'order-service', to: 'order-events', label: 'Publishes order events' },
      { from: 'order-service', to: 'erp', label: 'Sends paid orders (SOAP)', desc: 'Retried from an outbox table until the ERP confirms.' },
      { from: 'notification-worker', to: 'order-events', label: 'Subscribes to' },
      { from: 'notification-worker', to: 'email', label: 'Sends e-mails via (SMTP)' },
    ],
  },
  {
    key: 'shop-api-components',
    name: 'Shop API - Components',
    desc: 'Controllers, clients and repositories inside the Shop API.',
    state: 'ACTIVE',
    level: 'C3',
    tags: ['core', 'payments'],
    boxes: [
      box('web-shop', 'web-shop', 42, 0, 16, 8),
      box('shop-api', 'shop-api', 0, 14, 100, 24, { container: true }),
      child('shop-api', 'catalog-controller', 'catalog-controller', 2, 16, 16, 8),
      child('shop-api', 'cart-controller', 'cart-controller', 22, 16, 16, 8),
      child('shop-api', 'checkout-controller', 'checkout-controller', 42, 16, 16, 8),
      child('shop-api', 'account-controller', 'account-controller', 62, 16, 16, 8),
      child('shop-api', 'session-manager', 'session-manager', 82, 16, 16, 8),
      child('shop-api', 'catalog-client', 'catalog-client', 2, 28, 16, 8),
      child('shop-api', 'payment-client', 'payment-client', 22, 28, 16, 8),
      child('shop-api', 'cart-repo', 'cart-repo', 42, 28, 16, 8),
      child('shop-api', 'order-client', 'order-client', 62, 28, 16, 8),
      child('shop-api', 'customer-repo', 'customer-repo', 82, 28, 16, 8),
      box('catalog-service', 'catalog-service', 2, 46, 16, 8),
      box('payment', 'payment', 22, 46, 16, 8),
      box('shop-db', 'shop-db', 62, 46, 16, 8),
      box('order-service', 'order-service', 82, 46, 16, 8),
    ],
    notes: [
      {
        x: 0,
        y: 58,
        w: 60,
        text: 'Controllers only validate and map; the business rules live\nin the Order Service. All outgoing calls time out after 2 s.',
      },
    ],
    relations: [
      { from: 'web-shop', to: 'catalog-controller', label: 'GET /products' },
      { from: 'web-shop', to: 'cart-controller', label: 'GET/PUT /cart' },
      { from: 'web-shop', to: 'checkout-controller', label: 'POST /checkout', linksTo: ['checkout-controller-code'] },
      { from: 'web-shop', to: 'account-controller', label: '/account' },
      { from: 'catalog-controller', to: 'catalog-client', label: 'Uses' },
      { from: 'cart-controller', to: 'cart-repo', label: 'Uses' },
      { from: 'checkout-controller', to: 'payment-client', label: 'Creates payment' },
      { from: 'checkout-controller', to: 'cart-repo', label: 'Loads cart' },
      { from: 'checkout-controller', to: 'order-client', label: 'Submits order' },
      { from: 'account-controller', to: 'session-manager', label: 'Signs in with' },
      { from: 'account-controller', to: 'order-client', label: 'Reads order history' },
      { from: 'session-manager', to: 'customer-repo', label: 'Checks credentials' },
      { from: 'catalog-client', to: 'catalog-service', label: 'JSON/HTTP' },
      { from: 'payment-client', to: 'payment', label: 'REST', desc: 'Idempotency key = cart id + attempt number.' },
      { from: 'cart-repo', to: 'shop-db', label: 'SQL' },
      { from: 'order-client', to: 'order-service', label: 'JSON/HTTP' },
      { from: 'customer-repo', to: 'shop-db', label: 'SQL' },
    ],
  },
  {
    key: 'checkout-controller-code',
    name: 'Checkout Controller - Code',
    desc: 'The classes behind POST /checkout.',
    state: 'DRAFT',
    level: 'C4',
    tags: ['payments', 'pci', 'wip'],
    boxes: [
      box('web-shop', 'web-shop', 24, 0),
      box('checkout-controller', 'checkout-controller', 0, 14, 66, 24, { container: true }),
      child('checkout-controller', 'controller-class', null, 24, 16, 18, 8, { placeholder: 'CheckoutController' }),
      child('checkout-controller', 'validator-class', null, 2, 28, 18, 8, { placeholder: 'CheckoutRequestValidator' }),
      child('checkout-controller', 'calculator-class', null, 24, 28, 18, 8, { placeholder: 'PriceCalculator' }),
      child('checkout-controller', 'mapper-class', null, 46, 28, 18, 8, { placeholder: 'OrderDraftMapper' }),
      box('cart-repo', 'cart-repo', 76, 2),
      box('payment-client', 'payment-client', 76, 14),
      box('order-client', 'order-client', 76, 26),
    ],
    notes: [
      {
        x: 0,
        y: 42,
        w: 66,
        text: 'Drawn by hand from the code; the classes are placeholders, not\ncomponents. A failed order submission voids the payment intent.',
      },
    ],
    relations: [
      { from: 'web-shop', to: 'controller-class', label: 'POST /checkout', linksTo: ['shop-api-components'] },
      { from: 'controller-class', to: 'validator-class', label: 'validate(request)' },
      { from: 'controller-class', to: 'calculator-class', label: 'total(cart)' },
      { from: 'controller-class', to: 'mapper-class', label: 'toOrderDraft(cart, payment)' },
      { from: 'controller-class', to: 'cart-repo', label: 'findByCustomer(id)' },
      { from: 'controller-class', to: 'payment-client', label: 'createIntent(total)' },
      { from: 'controller-class', to: 'order-client', label: 'submit(draft)' },
    ],
  },
];

// Diagram ids first (relations link to diagrams defined later in the list), then their elements.
for (const [i, d] of DIAGRAM_DEFS.entries()) makeId(`diagram/${d.key}`, T0 + 4 * DAY + i * 3 * HOUR);
const diagramId = (key: string) => idOf(`diagram/${key}`);

const diagrams: Diagram[] = DIAGRAM_DEFS.map((d, i) => {
  const created = T0 + 4 * DAY + i * 3 * HOUR;
  let n = 0;
  const elementId = (kind: string, ref: string) => makeId(`diagram/${d.key}/${kind}/${ref}`, created + 1000 + 50 * n++);
  const instanceIds = new Map<string, string>();
  for (const b of d.boxes) instanceIds.set(b.ref, elementId('instance', b.ref));
  const instance = (ref: string) => {
    const id = instanceIds.get(ref);
    if (!id) throw new Error(`${d.key}: unknown instance ${ref}`);
    return id;
  };
  const componentInstances: ComponentInstance[] = d.boxes.map((b) => ({
    id: instance(b.ref),
    ref: b.ref,
    component: b.component === null ? null : componentId(b.component),
    placeholder: b.placeholder ?? '',
    isContainer: b.container ?? false,
    parent: b.parent === undefined ? null : instance(b.parent),
    position: { x: b.x, y: b.y },
    width: b.w,
    height: b.h,
  }));
  const textareas: TextArea[] = d.notes.map((t, j) => ({
    id: elementId('note', String(j)),
    position: { x: t.x, y: t.y },
    width: t.w,
    text: t.text,
  }));
  const relations: Relation[] = d.relations.map((r) => ({
    id: elementId('relation', `${r.from}->${r.to}`),
    fromComponentInstance: instance(r.from),
    toComponentInstance: instance(r.to),
    label: r.label,
    desc: r.desc ?? null,
    linksTo: (r.linksTo ?? []).map(diagramId),
  }));
  return {
    id: diagramId(d.key),
    ref: d.key,
    name: d.name,
    desc: d.desc,
    state: d.state,
    level: d.level,
    tags: d.tags.map((t) => idOf(`tag/${t}`)),
    componentInstances,
    textareas,
    relations,
  };
});

// ---------------------------------------------------------------------------------------------
// Write

function writeKind(kind: StoredKind, resources: Array<{ id: string }>): void {
  // The whole folder: components and diagrams sit in shard directories (resourcePath).
  rmSync(join(ROOT, DIRECTORIES[kind]), { recursive: true, force: true });
  for (const resource of resources) {
    const file = join(ROOT, resourcePath(kind, resource.id));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, serialize(kind, resource));
  }
}

mkdirSync(ROOT, { recursive: true });
writeFileSync(join(ROOT, 'organization.yaml'), serializeOrganization(organization));
writeKind('type', types);
writeKind('tag', tags);
writeKind('attribute', attributes);
writeKind('component', components);
writeKind('diagram', diagrams);
console.log(
  `sample-repo: ${types.length} types, ${tags.length} tags, ${attributes.length} attributes, ` +
    `${components.length} components, ${diagrams.length} diagrams`,
);
