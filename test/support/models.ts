/**
 * Support for the HTTP tests of components, diagrams and the model endpoint:
 * - `bigModel`: a deterministic generator of a large model request (refs everywhere, no positions);
 * - `refused` / `accepted`: a write with its exact outcome and what it did to the repository;
 * - `layoutOf` / `checkLayout`: a served diagram's layout, checked with the layout module's own checks.
 */
import type { ExecutionContext } from 'ava';
import { findChildrenOutside, findOverlaps, type LayoutInput, type LayoutResult } from '../../src/layout/layout.js';
import { errorContext, type RequestOptions, type TestServer } from './server.js';

// ---------------------------------------------------------------------------------------------
// Writes and what they leave behind

/**
 * A write that must be refused with exactly `status` and `error`, and `context` in its
 * `C4store-Error-Context` header (none when not given), leaving the repository (head, history)
 * and every list exactly as they were.
 */
export async function refused(
  t: ExecutionContext,
  s: TestServer,
  method: 'POST' | 'PUT',
  path: string,
  body: unknown,
  status: number,
  error: string,
  { context, ...options }: RequestOptions & { context?: string } = {},
): Promise<void> {
  const before = await s.state();
  const reply = await s.request(method, path, { ...options, body });
  t.is(reply.status, status, `${method} ${path}: ${reply.text}`);
  t.deepEqual(reply.body, { error }, `${method} ${path}`);
  t.is(errorContext(reply), context, `${method} ${path}: what it concerns`);
  t.is(await s.state(), before, `${method} ${path}: a refused write changes nothing`);
}

/**
 * A write that must succeed (200) and add exactly `commits` commits (1: it changed something,
 * 0: it changed nothing), on top of the previous head. Returns the parsed response body.
 */
export async function accepted(
  t: ExecutionContext,
  s: TestServer,
  method: 'POST' | 'PUT',
  path: string,
  body: unknown,
  commits: 0 | 1 = 1,
  options: RequestOptions = {},
): Promise<any> {
  const head = await s.head();
  const count = await s.commitCount();
  const reply = await s.request(method, path, { ...options, body });
  t.is(reply.status, 200, `${method} ${path}: ${reply.text}`);
  t.is(await s.commitCount(), count + commits, `${method} ${path}: ${commits} new commit(s)`);
  const newHead = await s.head();
  if (commits === 0) t.is(newHead, head, `${method} ${path}: head unchanged`);
  else t.is((await s.git('rev-parse', `${newHead}^`)).trim(), head, `${method} ${path}: one commit on top of the old head`);
  t.is(reply.headers.get('etag'), `"${newHead}"`);
  return reply.body;
}

/** `YYYY-MM-DD HH:MM:SS`, the default `apiContext`. */
export const API_CONTEXT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/** An id that has the shape of a service id but names nothing. */
export const UNKNOWN_ID = '01aaaaaaaaaaaaaaaaaaaaaaaa';

// ---------------------------------------------------------------------------------------------
// Layout of a served diagram

interface ServedInstance {
  id: string;
  parent: string | null;
  isContainer: boolean;
  placeholder: string;
  position: { x: number; y: number };
  width: number;
  height: number;
}

interface ServedDiagram {
  componentInstances: ServedInstance[];
  textareas: Array<{ id: string; text: string; position: { x: number; y: number }; width: number }>;
  relations: Array<{ fromComponentInstance: string; toComponentInstance: string }>;
}

/** The layout of a diagram as the API returns it, in the layout module's terms. */
export function layoutOf(diagram: ServedDiagram): { input: LayoutInput; result: LayoutResult } {
  const input: LayoutInput = {
    instances: diagram.componentInstances.map((i) => ({
      id: i.id,
      parent: i.parent,
      isContainer: i.isContainer,
      label: i.placeholder,
      position: i.position,
      width: i.width,
      height: i.height,
    })),
    textareas: diagram.textareas.map((a) => ({ id: a.id, text: a.text, position: a.position, width: a.width })),
    relations: diagram.relations.map((r) => ({ from: r.fromComponentInstance, to: r.toComponentInstance })),
  };
  const result: LayoutResult = {
    instances: new Map(diagram.componentInstances.map((i) => [i.id, { position: i.position, width: i.width, height: i.height }])),
    textareas: new Map(diagram.textareas.map((a) => [a.id, { position: a.position, width: a.width }])),
  };
  return { input, result };
}

/**
 * A complete, valid layout: whole-number positions, sizes 1–100, no two boxes overlapping
 * (a container and its own children excepted) and every child inside its container's box.
 */
export function checkLayout(t: ExecutionContext, diagram: ServedDiagram, what = 'diagram'): void {
  const whole = (n: unknown) => typeof n === 'number' && Number.isInteger(n);
  const size = (n: unknown) => whole(n) && (n as number) >= 1 && (n as number) <= 100;
  for (const i of diagram.componentInstances) {
    t.true(whole(i.position?.x) && whole(i.position?.y), `${what}: instance ${i.id} has a whole-number position`);
    t.true(size(i.width) && size(i.height), `${what}: instance ${i.id} has a size 1–100 (${i.width}×${i.height})`);
  }
  for (const a of diagram.textareas) {
    t.true(whole(a.position?.x) && whole(a.position?.y), `${what}: text area ${a.id} has a whole-number position`);
    t.true(size(a.width), `${what}: text area ${a.id} has a width 1–100`);
  }
  const { input, result } = layoutOf(diagram);
  t.deepEqual(findOverlaps(result, input), [], `${what}: no overlapping boxes`);
  t.deepEqual(findChildrenOutside(result, input), [], `${what}: children inside their containers`);
}

// ---------------------------------------------------------------------------------------------
// A big model

/** A small deterministic PRNG (mulberry32), so the big model is the same on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let r = Math.imul(a ^ (a >>> 15), 1 | a);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

export interface BigModel {
  components: Array<Record<string, unknown>>;
  diagrams: Array<Record<string, any>>;
}

const TYPE_SLUGS = ['person', 'software-system', 'container', 'component', 'database', 'queue'];
const STATES = ['DRAFT', 'ACTIVE', 'ARCHIVED'];
const LEVELS = ['C1', 'C2', 'C3', 'C4'];

export const componentRef = (n: number) => `c-${String(n).padStart(3, '0')}`;
export const diagramRef = (n: number) => `d-${String(n).padStart(2, '0')}`;

/**
 * A model request of `components` components and `diagrams` diagrams, named by refs only and
 * without any position or size, exercising refs used before their definition:
 * - component `linksTo` names the previous component and one further down the list;
 * - every diagram has 10–15 instances: one container with 3–4 children (half named by `parent`,
 *   half by `parentId`), one placeholder, the rest top-level instances of distinct components;
 * - relations chain the instances and name their ends by instance ref; the first relation's
 *   `linksTo` names the next diagram by ref (a diagram further down the request);
 * - one text area per diagram.
 */
export function bigModel({ components = 200, diagrams = 20, seed = 42 } = {}): BigModel {
  const rnd = random(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!;
  const model: BigModel = { components: [], diagrams: [] };
  for (let n = 0; n < components; n++) {
    model.components.push({
      ref: componentRef(n),
      name: `Service ${n}`,
      desc: n % 3 === 0 ? `Handles part ${n} of the business.` : undefined,
      typeSlug: TYPE_SLUGS[n % TYPE_SLUGS.length],
      state: STATES[n % STATES.length],
      linksTo: n === 0 ? [] : [...new Set([componentRef(n - 1), componentRef((n * 7 + 3) % components)])],
    });
  }
  for (let d = 0; d < diagrams; d++) {
    const count = 10 + Math.floor(rnd() * 6);
    const used = new Set<number>();
    const freshComponent = () => {
      for (;;) {
        const n = Math.floor(rnd() * components);
        if (!used.has(n)) {
          used.add(n);
          return componentRef(n);
        }
      }
    };
    const prefix = `${diagramRef(d)}-i`;
    const instances: Array<Record<string, unknown>> = [];
    const box = `${prefix}box`;
    instances.push({ ref: box, component: freshComponent(), isContainer: true });
    const children = 3 + (d % 2);
    for (let k = 0; k < children; k++) {
      instances.push({ ref: `${prefix}${instances.length}`, component: freshComponent(), [k % 2 ? 'parentId' : 'parent']: box });
    }
    instances.push({ ref: `${prefix}${instances.length}`, placeholder: `External system ${d}` });
    while (instances.length < count) instances.push({ ref: `${prefix}${instances.length}`, component: freshComponent() });
    const refs = instances.map((i) => i.ref as string);
    const relations: Array<Record<string, unknown>> = [];
    for (let k = 1; k < refs.length; k++) {
      if (refs[k] === box) continue;
      relations.push({ fromComponentInstance: refs[k - 1], toComponentInstance: refs[k], label: `calls ${k}` });
    }
    relations.push({ fromComponentInstance: pick(refs), toComponentInstance: pick(refs), desc: 'an extra dependency' });
    relations[0]!.linksTo = [diagramRef((d + 1) % diagrams)];
    model.diagrams.push({
      ref: diagramRef(d),
      name: `Diagram ${d}`,
      desc: `View number ${d}`,
      level: LEVELS[d % LEVELS.length],
      componentInstances: instances,
      textareas: [{ text: `Notes for diagram ${d}\nsecond line` }],
      relations,
    });
  }
  return JSON.parse(JSON.stringify(model)) as BigModel; // drops the undefined fields
}
