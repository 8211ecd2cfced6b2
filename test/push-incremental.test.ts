/**
 * The push check reads each commit from what it changed (src/push/check.ts checkCommits, one
 * `git diff-tree --stdin` for a range, a LoadedTree taking in the changes) and must say exactly
 * what checking every commit whole said: the same first problem, in the same words, for every
 * range. This compares it against that implementation, kept as the reference
 * (test/support/reference-push-check.ts), on real histories written by real git (`git
 * fast-import`): random adds, edits, deletes and renames of resources, mode changes, a file put
 * where a store folder is and back, a folder where a model file goes, a change of layout (flat ↔
 * sharded), refs traded, merges, a second root commit merged in, and broken commits of every kind
 * at random places, each range checked as a push to main (from a commit of the history) and as a
 * draft (`--not` the other branch) checks it, and from a few commits before each breaking change,
 * so that it comes past the range's first commit (checked whole) where the check goes by what
 * changed. Each kind of breaking change is also made alone, in two short histories.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_LIMITS, type Limits } from '../src/limits/limits.js';
import { resourcePath, type StoredKind, serialize, serializeOrganization } from '../src/model/files.js';
import { shardOf } from '../src/model/paths.js';
import type { Attribute, Component, ComponentType, Diagram, Organization, Tag } from '../src/model/types.js';
import { checkCommits } from '../src/push/check.js';
import { referenceCheckCommits } from './support/reference-push-check.js';
import { Semaphore } from '../src/semaphore.js';

interface Entry {
  mode: '100644' | '100755' | '120000' | '160000';
  data: string;
}

interface World {
  org: Organization;
  types: Map<string, ComponentType>;
  tags: Map<string, Tag>;
  attributes: Map<string, Attribute>;
  components: Map<string, Component>;
  diagrams: Map<string, Diagram>;
  flat: boolean;
  /** Files c4store does not own. */
  extra: Map<string, Entry>;
  /** What breaks the tree (null: the path removed), put over the rest; cleared, or not, at each commit. */
  broken: Map<string, Entry | null>;
}

/** Small limits, so that the bounds are reached. */
const LIMITS: Limits = { ...DEFAULT_LIMITS, diagramInstances: 4, orgComponents: 16 };
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function clone(world: World): World {
  return {
    org: structuredClone(world.org),
    types: structuredClone(world.types),
    tags: structuredClone(world.tags),
    attributes: structuredClone(world.attributes),
    components: structuredClone(world.components),
    diagrams: structuredClone(world.diagrams),
    flat: world.flat,
    extra: new Map(world.extra),
    broken: new Map(world.broken),
  };
}

function pathOf(world: World, kind: StoredKind, id: string): string {
  return resourcePath(kind, id, world.flat ? 'flat' : 'sharded');
}

/** The tree of a world: path → entry, a file where a folder would be (or the reverse) winning over what it displaces when it is a breakage. */
function render(world: World): Map<string, Entry> {
  const files = new Map<string, Entry>();
  const file = (data: string): Entry => ({ mode: '100644', data });
  files.set('organization.yaml', file(serializeOrganization(world.org)));
  const kinds: Array<[StoredKind, Map<string, { id: string }>]> = [
    ['type', world.types],
    ['tag', world.tags],
    ['attribute', world.attributes],
    ['component', world.components],
    ['diagram', world.diagrams],
  ];
  for (const [kind, resources] of kinds) {
    for (const resource of resources.values()) files.set(pathOf(world, kind, resource.id), file(serialize(kind, resource)));
  }
  for (const [path, entry] of world.extra) files.set(path, entry);
  for (const [path, entry] of world.broken) {
    if (entry === null) files.delete(path);
    else files.set(path, entry);
  }
  const paths = [...files.keys()].sort();
  for (const path of paths) {
    const under = paths.filter((other) => other.startsWith(`${path}/`) && files.has(other));
    if (under.length === 0 || !files.has(path)) continue;
    if (world.broken.has(path)) for (const other of under) files.delete(other);
    else files.delete(path);
  }
  return files;
}

/** A history of two branches, `a` and `b`, made by one `git fast-import`. */
/** A history of two branches: its `git fast-import` stream, each branch's commits (marks), and the commits a breaking change was made in, each with a commit a little before it on its branch. */
function makeHistory(
  seed: number,
  commits: number,
  /** A breaking change (its index) made in the commit before the last, and no other. */
  forced?: number,
): {
  stream: string;
  marks: number;
  branches: Record<'a' | 'b', number[]>;
  breaks: Array<{ branch: 'a' | 'b'; before: number }>;
  /** How many kinds of breaking change there are. */
  kinds: number;
} {
  const rnd = random(seed);
  const pick = <T>(items: readonly T[]): T | undefined => (items.length === 0 ? undefined : items[Math.floor(rnd() * items.length)]);
  const chance = (p: number) => rnd() < p;
  let n = 0;
  const generatedId = () => Array.from({ length: 26 }, (_, i) => (i === 0 ? '0' : ALPHABET[Math.floor(rnd() * 32)])).join('');
  const fresh = (): World => ({
    org: { name: 'Acme', slug: 'acme', members: ['ada@example.com'] },
    types: new Map([
      ['y1', { id: 'y1', slug: 'service', name: 'Service' }],
      ['y2', { id: 'y2', slug: 'database', name: 'Database' }],
    ]),
    tags: new Map(),
    // One attribute for services only, one whose values are members: what a type's slug and the members are checked against.
    attributes: new Map([
      ['a1', { id: 'a1', name: 'Owner team', type: 'STRING', desc: null, required: false, forTypes: ['service'] }],
      ['a2', { id: 'a2', name: 'Owner', type: 'USERLIST', desc: null, required: false, forTypes: [] }],
    ]),
    components: new Map(),
    diagrams: new Map(),
    flat: false,
    extra: new Map(),
    broken: new Map(),
  });
  const referenced = (world: World, id: string) =>
    [...world.components.values()].some((c) => c.linksTo.includes(id) || c.tags?.includes(id) || c.attributes.some((v) => v.id === id)) ||
    [...world.diagrams.values()].some((d) => d.tags.includes(id) || d.componentInstances.some((i) => i.component === id));

  const addComponent = (world: World, id = chance(0.5) ? `c${++n}` : generatedId()): Component => {
    const others = [...world.components.keys()];
    const component: Component = {
      id,
      ref: chance(0.7) ? `ref-${++n}` : undefined,
      name: `Component ${n}`,
      desc: chance(0.5) ? null : `About ${n}`,
      state: 'ACTIVE',
      typeId: pick(['y1', 'y2', null]) ?? null,
      linksTo: [...new Set([pick(others), pick(others)].filter((x): x is string => x !== undefined))],
      attributes: [],
      tags: chance(0.3) ? [pick([...world.tags.keys()])].filter((x): x is string => x !== undefined) : undefined,
    };
    // A value of some of the attributes that apply: the members' attribute holds a member.
    for (const attribute of world.attributes.values()) {
      const applies = attribute.forTypes.length === 0 || (component.typeId === 'y1' && attribute.forTypes.includes('service'));
      if (applies && chance(0.5))
        component.attributes.push({ id: attribute.id, value: attribute.type === 'USERLIST' ? 'ada@example.com' : 'x' });
    }
    world.components.set(id, component);
    return component;
  };
  const diagramOf = (world: World, members: Component[]): Diagram => {
    const id = `d${++n}`;
    const instances = members.map((c, k) => ({
      id: `i${n}-${k}`,
      component: c.id,
      placeholder: '',
      isContainer: false,
      parent: null,
      position: { x: k * 20, y: 0 },
      width: 10,
      height: 10,
    }));
    return {
      id,
      ref: chance(0.5) ? `dref-${n}` : undefined,
      name: `Diagram ${n}`,
      desc: null,
      state: 'ACTIVE',
      level: 'C2',
      tags: [],
      componentInstances: instances,
      textareas: [],
      relations:
        instances.length >= 2
          ? [
              {
                id: `r${n}`,
                fromComponentInstance: instances[0]!.id,
                toComponentInstance: instances[1]!.id,
                label: null,
                desc: null,
                linksTo: [],
              },
            ]
          : [],
    };
  };

  /** Changes that keep the model valid (but for the component limit, which they may pass). */
  const valid: Array<[number, (world: World) => void]> = [
    [6, (world) => void addComponent(world)],
    [
      8,
      (world) => {
        const c = pick([...world.components.values()]);
        if (c) c.desc = `Edited ${++n}`;
      },
    ],
    [
      2,
      (world) => {
        const c = pick([...world.components.values()]);
        if (c) c.ref = `ref-${++n}`;
      },
    ],
    [
      1,
      (world) => {
        // Two components trade refs in one commit.
        const [x, y] = [pick([...world.components.values()]), pick([...world.components.values()])];
        if (x && y && x !== y) [x.ref, y.ref] = [y.ref, x.ref];
      },
    ],
    [
      3,
      (world) => {
        const c = pick([...world.components.values()].filter((each) => !referenced(world, each.id)));
        if (c) world.components.delete(c.id);
      },
    ],
    [
      2,
      (world) => {
        const id = `t${++n}`;
        world.tags.set(id, { id, ref: chance(0.5) ? `tref-${n}` : undefined, name: `Tag ${n}`, desc: null, color: 'blue' });
      },
    ],
    [
      1,
      (world) => {
        const t = pick([...world.tags.values()].filter((each) => !referenced(world, each.id)));
        if (t) world.tags.delete(t.id);
      },
    ],
    [
      1,
      (world) => {
        const type = pick([...world.types.values()]);
        if (type) type.name = `Type ${++n}`;
      },
    ],
    [
      1,
      (world) => {
        const id = `a${++n}`;
        world.attributes.set(id, { id, name: `Attribute ${n}`, type: 'STRING', desc: null, required: false, forTypes: [] });
      },
    ],
    [
      1,
      (world) => {
        const a = pick([...world.attributes.values()].filter((each) => !referenced(world, each.id)));
        if (a) world.attributes.delete(a.id);
      },
    ],
    [1, (world) => void world.org.members.push(`m${++n}@example.com`)],
    [
      3,
      (world) => {
        const members = [...world.components.values()].slice(-3);
        if (members.length > 0) {
          const diagram = diagramOf(world, members);
          world.diagrams.set(diagram.id, diagram);
        }
      },
    ],
    [
      2,
      (world) => {
        const d = pick([...world.diagrams.values()]);
        if (d) d.desc = `Edited ${++n}`;
      },
    ],
    [
      1,
      (world) => {
        const d = pick([...world.diagrams.values()]);
        if (d) world.diagrams.delete(d.id);
      },
    ],
    [
      2,
      (world) => {
        const path = pick(['README.md', 'docs/notes.md', 'components/notes.txt', 'tags/README', 'scripts/run.sh', 'link']);
        if (path === undefined) return;
        if (world.extra.has(path) && chance(0.4)) world.extra.delete(path);
        else
          world.extra.set(path, {
            mode: path === 'scripts/run.sh' ? '100755' : path === 'link' ? '120000' : '100644',
            data: path === 'link' ? 'README.md' : `text ${++n}\n`,
          });
      },
    ],
    [3, (world) => void (world.flat = !world.flat)],
  ];

  /** Changes that break the commit, kept in `broken` until cleared. */
  const component = (world: World) => pick([...world.components.values()]);
  const breaking: Array<[number, (world: World) => void]> = [
    [
      2,
      (world) => {
        const c = component(world);
        if (c) world.broken.set(pathOf(world, 'component', c.id), { mode: '100644', data: 'name: [unclosed\n' });
      },
    ],
    [
      1,
      (world) => {
        const c = component(world);
        if (c)
          world.broken.set(pathOf(world, 'component', c.id), {
            mode: '100644',
            data: serialize('component', c).replace('name:', 'name: a\nname:'),
          });
      },
    ],
    [
      1,
      (world) => {
        const c = component(world);
        if (c)
          world.broken.set(pathOf(world, 'component', c.id), {
            mode: '100644',
            data: `${serialize('component', c)}desc: !!binary aGVsbG8=\n`,
          });
      },
    ],
    [
      2,
      (world) => {
        const c = component(world);
        const mode = pick(['100755', '120000', '160000'] as const)!;
        if (c) {
          const data = mode === '160000' ? '1234567890123456789012345678901234567890' : serialize('component', c);
          world.broken.set(pathOf(world, 'component', c.id), { mode, data });
        }
      },
    ],
    [
      2,
      (world) => {
        // A file where c4store keeps a folder; cleared, the folder comes back.
        const c = component(world);
        const path = pick([c && !world.flat ? `components/${shardOf(c.id)}` : 'components', 'tags', '.c4store', 'diagrams'])!;
        world.broken.set(path, { mode: '100644', data: 'not a folder\n' });
      },
    ],
    [
      1,
      (world) => {
        // A folder where a model file goes.
        const c = component(world);
        const path = c ? pathOf(world, 'component', c.id) : 'organization.yaml';
        world.broken.set(`${path}/inside`, { mode: '100644', data: 'x\n' });
      },
    ],
    [1, (world) => void world.broken.set('organization.yaml', null)],
    [
      2,
      (world) => {
        const c = component(world);
        if (c)
          world.broken.set(pathOf(world, 'component', c.id), { mode: '100644', data: serialize('component', { ...c, typeId: 'nope' }) });
      },
    ],
    [
      2,
      (world) => {
        // A component removed while others link to it.
        const c = pick([...world.components.values()].filter((each) => referenced(world, each.id)));
        if (c) world.broken.set(pathOf(world, 'component', c.id), null);
      },
    ],
    [
      2,
      (world) => {
        // A ref another component holds already.
        const [x, y] = [component(world), pick([...world.components.values()].filter((c) => c.ref !== undefined))];
        if (x && y && x !== y)
          world.broken.set(pathOf(world, 'component', x.id), { mode: '100644', data: serialize('component', { ...x, ref: y.ref }) });
      },
    ],
    [
      1,
      (world) => {
        // Another component's id as a ref.
        const [x, y] = [component(world), component(world)];
        if (x && y && x !== y)
          world.broken.set(pathOf(world, 'component', x.id), { mode: '100644', data: serialize('component', { ...x, ref: y.id }) });
      },
    ],
    [
      1,
      (world) => {
        // A new component whose id is another's ref.
        const holder = pick([...world.components.values()].filter((c) => c.ref !== undefined));
        if (holder?.ref) {
          const c = { ...holder, id: holder.ref, ref: undefined, linksTo: [] };
          world.broken.set(pathOf(world, 'component', c.id), { mode: '100644', data: serialize('component', c) });
        }
      },
    ],
    [
      1,
      (world) => {
        // A tag holding a component's id.
        const c = component(world);
        if (c)
          world.broken.set(pathOf(world, 'tag', c.id), {
            mode: '100644',
            data: serialize('tag', { id: c.id, name: 'Clash', desc: null, color: 'red' }),
          });
      },
    ],
    [
      2,
      (world) => {
        // A file moved to where it does not belong (renamed), or given a name that is no id.
        const c = component(world);
        if (!c) return;
        world.broken.set(pathOf(world, 'component', c.id), null);
        const wrong = world.flat ? `components/00/${c.id}.yaml` : `components/${c.id}.yaml`;
        world.broken.set(chance(0.7) ? wrong : 'components/Bad Name.yaml', { mode: '100644', data: serialize('component', c) });
      },
    ],
    [
      1,
      (world) => {
        // A required attribute no component has a value of.
        const id = `a${++n}`;
        world.broken.set(pathOf(world, 'attribute', id), {
          mode: '100644',
          data: serialize('attribute', { id, name: 'Needed', type: 'STRING', desc: null, required: true, forTypes: [] }),
        });
      },
    ],
    [
      2,
      (world) => {
        // A diagram over the limit of instances.
        const members = [...world.components.values()].slice(0, 5);
        if (members.length === 5) {
          const d = diagramOf(world, members);
          world.broken.set(pathOf(world, 'diagram', d.id), { mode: '100644', data: serialize('diagram', d) });
        }
      },
    ],
    [
      1,
      (world) => {
        // Components past the organization's limit.
        for (let k = world.components.size; k <= LIMITS.orgComponents; k++) {
          const c = { ...component(world)!, id: `over${++n}`, ref: undefined };
          world.broken.set(pathOf(world, 'component', c.id), { mode: '100644', data: serialize('component', c) });
        }
      },
    ],
    [
      1,
      (world) => {
        const t = pick([...world.tags.values()].filter((each) => referenced(world, each.id)));
        if (t) world.broken.set(pathOf(world, 'tag', t.id), null);
      },
    ],
  ];
  breaking.push(
    [
      3,
      (world) => {
        // A component naming what does not exist: a component, an attribute, a tag.
        const c = component(world);
        if (!c) return;
        const broken = pick([{ linksTo: ['ghost'] }, { attributes: [{ id: 'ghost', value: 'x' }] }, { tags: ['ghost'] }])!;
        world.broken.set(pathOf(world, 'component', c.id), { mode: '100644', data: serialize('component', { ...c, ...broken }) });
      },
    ],
    [
      2,
      (world) => {
        // A diagram with an instance of no component, or a relation to no instance.
        const members = [...world.components.values()].slice(0, 2);
        if (members.length < 2) return;
        const d = diagramOf(world, members);
        if (chance(0.5)) d.componentInstances[0]!.component = 'ghost';
        else d.relations[0]!.toComponentInstance = 'ghost';
        world.broken.set(pathOf(world, 'diagram', d.id), { mode: '100644', data: serialize('diagram', d) });
      },
    ],
    [
      4,
      (world) => {
        // One component written where a tree of the other layout keeps it: the others are now misplaced.
        const c = component(world);
        if (!c) return;
        world.broken.set(pathOf(world, 'component', c.id), null);
        world.broken.set(resourcePath('component', c.id, world.flat ? 'sharded' : 'flat'), {
          mode: '100644',
          data: serialize('component', c),
        });
      },
    ],
  );
  breaking.push(
    [
      3,
      (world) => {
        // organization.yaml unreadable, or without the member a USERLIST value names.
        const org = chance(0.5) ? 'members: [unclosed\n' : serializeOrganization({ ...world.org, members: ['bob@example.com'] });
        world.broken.set('organization.yaml', { mode: '100644', data: org });
      },
    ],
    [
      3,
      (world) => {
        // A type's slug changed under the attributes that name it, or the type removed under its components.
        const type = world.types.get('y1')!;
        if (chance(0.5))
          world.broken.set(pathOf(world, 'type', 'y1'), { mode: '100644', data: serialize('type', { ...type, slug: 'renamed' }) });
        else world.broken.set(pathOf(world, 'type', 'y1'), null);
      },
    ],
    [
      3,
      (world) => {
        // An attribute now of another type than its values.
        const attribute = world.attributes.get('a1');
        if (attribute)
          world.broken.set(pathOf(world, 'attribute', 'a1'), {
            mode: '100644',
            data: serialize('attribute', { ...attribute, type: 'NUMBER' }),
          });
      },
    ],
  );
  const weighted = (ops: Array<[number, (world: World) => void]>) => {
    const total = ops.reduce((sum, [w]) => sum + w, 0);
    let roll = rnd() * total;
    for (const [w, op] of ops) if ((roll -= w) < 0) return op;
    return ops[0]![1];
  };

  const lines: string[] = [];
  let mark = 0;
  const branches: Record<'a' | 'b', number[]> = { a: [], b: [] };
  const breaks: Array<{ branch: 'a' | 'b'; before: number }> = [];
  const worlds: Record<'a' | 'b', World | undefined> = { a: undefined, b: undefined };
  const emit = (branch: 'a' | 'b', world: World, from: number | undefined, merge: number | undefined) => {
    mark++;
    lines.push(
      `commit refs/heads/${branch}`,
      `mark :${mark}`,
      `committer T <t@example.com> ${1_700_000_000 + mark} +0000`,
      'data 2',
      `${mark % 100}`.padStart(2, '0'),
    );
    if (from !== undefined) lines.push(`from :${from}`);
    if (merge !== undefined) lines.push(`merge :${merge}`);
    lines.push('deleteall');
    for (const [path, entry] of render(world)) {
      if (entry.mode === '160000') lines.push(`M 160000 ${entry.data} ${path}`);
      else lines.push(`M ${entry.mode} inline ${path}`, `data ${Buffer.byteLength(entry.data)}`, entry.data);
    }
    branches[branch].push(mark);
  };
  for (let i = 0; i < commits; i++) {
    const branch: 'a' | 'b' = worlds.a === undefined || rnd() < 0.7 ? 'a' : 'b';
    let world: World;
    let from = branches[branch].at(-1);
    let merge: number | undefined;
    if (worlds[branch] === undefined) {
      // The first commit of a branch: a's is a root; b's is a second root, or a branch of a.
      const root = branch === 'a' || chance(0.4);
      world = root ? fresh() : clone(worlds.a!);
      if (root) for (let k = 0; k < 6; k++) addComponent(world);
      if (!root) from = branches.a.at(-1);
    } else {
      world = clone(worlds[branch]!);
      if (branch === 'a' && branches.b.length > 0 && chance(0.15)) {
        // A merge of b into a, holding what b holds, or what a holds.
        merge = branches.b.at(-1);
        if (chance(0.5)) world = clone(worlds.b!);
      }
    }
    if (chance(0.5)) world.broken.clear();
    for (let k = 1 + Math.floor(rnd() * 3); k > 0; k--) weighted(valid)(world);
    const broke = forced === undefined ? chance(0.2) : i === commits - 2;
    if (broke) (forced === undefined ? weighted(breaking) : breaking[forced]![1])(world);
    emit(branch, world, from, merge);
    const before = branches[branch].at(-1 - (1 + Math.floor(rnd() * 3)));
    if (broke && before !== undefined) breaks.push({ branch, before });
    worlds[branch] = world;
  }
  return { stream: `${lines.join('\n')}\n`, marks: mark, branches, breaks, kinds: breaking.length };
}

function git(gitdir: string, args: readonly string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('git', ['--git-dir', gitdir, ...args], { maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`git ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

async function compare(t: import('ava').ExecutionContext, seed: number, commits: number, forced?: number) {
  const dir = await mkdtemp(join(tmpdir(), 'c4store-push-incremental-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const gitdir = join(dir, 'repo.git');
  await git(gitdir, ['init', '-q', '--bare']);
  const history = makeHistory(seed, commits, forced);
  const marksFile = join(dir, 'marks');
  await git(gitdir, ['fast-import', '--quiet', `--export-marks=${marksFile}`], history.stream);
  const oids = new Map<number, string>();
  for (const line of (await readFile(marksFile, 'utf8')).split('\n').filter(Boolean)) {
    const [mark, oid] = line.split(' ');
    oids.set(Number(mark!.slice(1)), oid!);
  }
  const rnd = random(seed * 7 + 1);
  const all = [...oids.values()];
  const ranges: Array<{ range: string[]; before?: string }> = [{ range: ['refs/heads/a'] }];
  if (history.branches.b.length > 0) {
    ranges.push(
      { range: ['refs/heads/a', '--not', 'refs/heads/b'] },
      { range: ['refs/heads/b'] },
      { range: ['refs/heads/b', '--not', 'refs/heads/a'] },
    );
  }
  // Each breaking change, checked from a few commits before it: past the first commit of the range,
  // which is checked whole, and before any earlier problem.
  for (const { branch, before } of history.breaks) {
    ranges.push({ range: [`refs/heads/${branch}`, `^${oids.get(before)!}`], before: oids.get(before)! });
  }
  for (let k = 0; k < 6; k++) {
    const before = all[Math.floor(rnd() * all.length)]!;
    const tip = k % 2 === 0 ? 'refs/heads/a' : all[Math.floor(rnd() * all.length)]!;
    ranges.push({ range: [tip, `^${before}`], before });
  }
  const outcomes = { passed: 0, refused: 0, depth: 0 };
  for (const { range, before } of ranges) {
    const expected = await referenceCheckCommits(gitdir, range, {}, LIMITS, before);
    const actual = await checkCommits(gitdir, range, {}, LIMITS, before);
    t.deepEqual(actual, expected, `seed ${seed}, range ${range.join(' ')}${before ? ` from ${before}` : ''}`);
    if (expected.length === 0) {
      outcomes.passed++;
      continue;
    }
    outcomes.refused++;
    // How deep in its range the refused commit is: how far the check went commit by commit.
    const walked = (await git(gitdir, ['rev-list', '--reverse', '--topo-order', ...range, '--'])).split('\n');
    outcomes.depth = Math.max(
      outcomes.depth,
      walked.findIndex((commit) => commit !== '' && expected[0]!.startsWith(`commit ${commit.slice(0, 12)}`)) + 1,
    );
  }
  return outcomes;
}

/**
 * The comparisons run two at a time: all 44 at once on two busy cores made every one of them
 * finish only after minutes, together, past ava's two minutes without a result.
 */
const comparisons = new Semaphore(2);

const SEEDS = Array.from({ length: 20 }, (_, i) => i + 1);
for (const seed of SEEDS) {
  test(`the incremental push check says what checking each commit whole says (history ${seed})`, async (t) => {
    const outcomes = await comparisons.run(() => compare(t, seed, 40));
    t.log(`${outcomes.passed} ranges passed, ${outcomes.refused} refused (the deepest at commit ${outcomes.depth} of its range)`);
  });
}

const BREAKING_KINDS = makeHistory(0, 1).kinds;
// Each kind of breaking change at least twice past the first commit of a range, where the check goes by what changed.
for (let kind = 0; kind < BREAKING_KINDS; kind++) {
  test(`the incremental push check says what checking each commit whole says (breaking change ${kind})`, async (t) => {
    for (const seed of [100 + kind, 200 + kind]) await comparisons.run(() => compare(t, seed, 7, kind));
  });
}
