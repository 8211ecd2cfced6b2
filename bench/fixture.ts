/**
 * Builds a benchmark organization fast: the organization is created by the service's own
 * Orgs.create (so organization.yaml and the types are exactly what the service writes),
 * then all components and diagrams go into one commit through Repo.commit, serialized with
 * the service's own serialize(). No HTTP, no layout: every instance has a position and size.
 */
import { cp, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resourcePath, serialize } from '../src/model/files.js';
import { newId } from '../src/model/ids.js';
import type { Component, ComponentInstance, Diagram, Relation } from '../src/model/types.js';
import { Orgs } from '../src/service/orgs.js';
import { KeyStore } from '../src/store/keys.js';
import type { FileChange } from '../src/store/repo.js';

export const BENCH_AUTHOR = { name: 'bench', email: 'bench@c4store' };
export const API_CONTEXT = '2026-01-01 00:00:00';

export interface BenchOrg {
  dataDir: string;
  slug: string;
  gitdir: string;
  /** An editor key of the organization. */
  key: string;
  components: Component[];
  diagrams: number;
  typeIds: string[];
  /** Wall time to build it (ms). */
  buildMs: number;
}

/** `count` components and one diagram per 10 components, in a fresh data directory. */
export async function buildOrg(count: number, slug = 'bench'): Promise<BenchOrg> {
  const began = performance.now();
  const dataDir = await mkdtemp(join(tmpdir(), `c4store-bench-${count}-`));
  const org = await new Orgs(dataDir).create(slug, { name: `Bench ${count}`, members: ['ada@example.com'], author: BENCH_AUTHOR });
  const { key } = await new KeyStore(dataDir).create(slug, { label: 'bench' });
  const repo = org.repo;
  const head = (await repo.readHead())!;
  const model = (await org.head()).model;
  const typeIds = [...model.types.keys()];

  const components: Component[] = [];
  for (let n = 0; n < count; n++) {
    const id = newId();
    components.push({
      id,
      ref: `c-${n}`,
      name: `Service ${n}`,
      desc: `Handles part ${n} of the business.`,
      state: 'ACTIVE',
      typeId: typeIds[n % typeIds.length]!,
      apiContext: API_CONTEXT,
      linksTo: n === 0 ? [] : [components[n - 1]!.id],
      attributes: [],
    });
  }
  const changes: FileChange[] = components.map((c) => ({ path: resourcePath('component', c.id), content: serialize('component', c) }));
  const diagrams = Math.max(1, Math.floor(count / 10));
  for (let d = 0; d < diagrams; d++) {
    const diagram = makeDiagram(d, components.slice(d * 10, d * 10 + 10));
    changes.push({ path: resourcePath('diagram', diagram.id), content: serialize('diagram', diagram) });
  }
  await repo.commit({ parent: head, changes, author: BENCH_AUTHOR, message: `Bench: ${count} components, ${diagrams} diagrams\n` });
  return { dataDir, slug, gitdir: repo.gitdir, key, components, diagrams, typeIds, buildMs: performance.now() - began };
}

/** A copy of the organization's data directory (repository and keys), for a server of its own. */
export async function copyDataDir(org: BenchOrg, name: string): Promise<string> {
  const copy = `${org.dataDir}-${name}`;
  await cp(org.dataDir, copy, { recursive: true });
  return copy;
}

/** A laid-out diagram of up to 10 components: a 5-wide grid, a chain of relations, one text area. */
export function makeDiagram(d: number, members: readonly Component[]): Diagram {
  const instances: ComponentInstance[] = members.map((c, k) => ({
    id: newId(),
    ref: `d${d}-i${k}`,
    component: c.id,
    placeholder: '',
    isContainer: false,
    parent: null,
    position: { x: (k % 5) * 24, y: Math.floor(k / 5) * 12 },
    width: 18,
    height: 8,
  }));
  const relations: Relation[] = instances.slice(1).map((to, k) => ({
    id: newId(),
    fromComponentInstance: instances[k]!.id,
    toComponentInstance: to.id,
    label: `calls ${k}`,
    desc: null,
    linksTo: [],
  }));
  return {
    id: newId(),
    ref: `d-${d}`,
    name: `Diagram ${d}`,
    desc: `View number ${d}`,
    state: 'ACTIVE',
    level: 'C2',
    tags: [],
    componentInstances: instances,
    textareas: [{ id: newId(), position: { x: 0, y: 30 }, width: 40, text: `Notes for diagram ${d}` }],
    relations,
    apiContext: API_CONTEXT,
  };
}

/** The component as an update body: every field as stored, `desc` changed. */
export function updateBody(c: Component, desc: string): Record<string, unknown> {
  return {
    id: c.id,
    ref: c.ref,
    name: c.name,
    desc,
    state: c.state,
    typeId: c.typeId,
    apiContext: c.apiContext,
    linksTo: c.linksTo,
    attributes: [],
  };
}

/** The file the update above writes: the same change, for the baselines. */
export function updatedFile(c: Component, desc: string): FileChange {
  return { path: resourcePath('component', c.id), content: serialize('component', { ...c, desc }) };
}

/** A /model import body: 100 components (by ref, so repeated imports update them) and 10 laid-out diagrams. */
export function importBody(round: number, components = 100): Record<string, unknown> {
  const refs = Array.from({ length: components }, (_, n) => `imp-${n}`);
  const diagrams = Array.from({ length: Math.max(1, Math.floor(components / 10)) }, (_, d) => ({
    ref: `imp-d-${d}`,
    name: `Imported diagram ${d}`,
    desc: `Import ${round}`,
    level: 'C2',
    componentInstances: refs.slice(d * 10, d * 10 + 10).map((ref, k) => ({
      ref: `imp-d${d}-i${k}`,
      component: ref,
      position: { x: (k % 5) * 24, y: Math.floor(k / 5) * 12 },
      width: 18,
      height: 8,
    })),
    textareas: [{ ref: `imp-d${d}-t`, position: { x: 0, y: 30 }, width: 40, text: 'Imported' }],
    relations: refs.slice(d * 10 + 1, d * 10 + 10).map((_, k) => ({
      ref: `imp-d${d}-r${k}`,
      fromComponentInstance: `imp-d${d}-i${k}`,
      toComponentInstance: `imp-d${d}-i${k + 1}`,
      label: 'calls',
    })),
  }));
  return {
    components: refs.map((ref, n) => ({
      ref,
      name: `Imported ${n}`,
      desc: `Import ${round}`,
      state: 'ACTIVE',
      typeSlug: 'container',
      linksTo: n === 0 ? [] : [refs[n - 1]],
      apiContext: API_CONTEXT,
    })),
    diagrams,
  };
}
