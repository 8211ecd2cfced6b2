import type { ModelDiff, OrganizationChange } from '../history/diff.js';

/**
 * A draft's changes as a reviewer says them: "added component Fraud Check", "on Payments C2:
 * moved 2 boxes, relabelled 'SQL'". Pure: the diff in, the organization's own change first
 * (it is no resource), then one sentence per resource.
 */

/**
 * How a sentence's parts are written: `name` for what came from the model (a name, a label, a
 * value), `text` for the rest. Plain text by default; a page passes HTML escaping, and isolation
 * for the names (src/escape.ts `bdi`), so that no name can reorder the words around it.
 */
export interface Spelling {
  text: (words: string) => string;
  name: (value: string) => string;
}

const PLAIN: Spelling = { text: (words) => words, name: (value) => value };

const KIND_WORDS: Record<string, string> = {
  type: 'type',
  tag: 'tag',
  attribute: 'attribute',
  component: 'component',
  diagram: 'diagram',
};

export function describeChanges(diff: ModelDiff, spelling: Spelling = PLAIN): string[] {
  const { text, name } = spelling;
  const sentences = organizationSentences(diff.organization, spelling);
  for (const added of diff.added) sentences.push(text(`added ${KIND_WORDS[added.kind]} `) + name(added.name ?? added.id));
  for (const removed of diff.removed) sentences.push(text(`removed ${KIND_WORDS[removed.kind]} `) + name(removed.name ?? removed.id));
  for (const changed of diff.changed) {
    const parts = changed.kind === 'diagram' ? diagramParts(changed.fields, spelling) : resourceParts(changed.fields, spelling);
    // apiContext goes unsaid beside other changes (every write that changes a resource sets it),
    // but a resource whose one change is its apiContext was changed all the same.
    const said = parts.length > 0 ? parts.join(text(', ')) : text('changed apiContext');
    sentences.push(text('on ') + name(changed.name ?? changed.id) + text(': ') + said);
  }
  return sentences;
}

/**
 * A change of `organization.yaml` (its name, its members, its slug) as a reviewer says it. The
 * organization is no resource; a draft pushed over git may change it all the same, and a merge
 * brings it into main.
 */
function organizationSentences(change: OrganizationChange | undefined, spelling: Spelling): string[] {
  if (change === undefined) return [];
  const { text, name } = spelling;
  const sentences: string[] = [];
  const field = (path: string) => change.fields.find((each) => each.field === path);
  const renamed = field('name');
  if (renamed) sentences.push(text('renamed the organization ') + fromTo(renamed.old, renamed.new, spelling));
  const members = field('members');
  if (members) {
    const before = (members.old ?? []) as string[];
    const after = (members.new ?? []) as string[];
    const names = (list: readonly string[]) => list.map(name).join(text(', '));
    const added = after.filter((member) => !before.includes(member));
    const removed = before.filter((member) => !after.includes(member));
    if (added.length > 0) sentences.push(text(`added member${added.length === 1 ? '' : 's'} `) + names(added));
    if (removed.length > 0) sentences.push(text(`removed member${removed.length === 1 ? '' : 's'} `) + names(removed));
    if (added.length + removed.length === 0) sentences.push(text('reordered the members'));
  }
  const slug = field('slug');
  if (slug) sentences.push(text("changed the organization's slug ") + fromTo(slug.old, slug.new, spelling));
  return sentences;
}

type Field = ModelDiff['changed'][number]['fields'][number];

function quote(value: unknown, { text, name }: Spelling): string {
  return typeof value === 'string' ? text("'") + name(value) + text("'") : value === null ? text('nothing') : name(JSON.stringify(value));
}

/** A value's change, `'old' to 'new'`. */
function fromTo(old: unknown, now: unknown, spelling: Spelling): string {
  return quote(old, spelling) + spelling.text(' to ') + quote(now, spelling);
}

function resourceParts(fields: readonly Field[], spelling: Spelling): string[] {
  const { text } = spelling;
  const parts: string[] = [];
  for (const field of fields) {
    if (field.field === 'apiContext') continue;
    if (field.field === 'name') parts.push(text('renamed ') + fromTo(field.old, field.new, spelling));
    else if (field.field === 'desc') parts.push(text('changed the description'));
    // The API names a component's type twice (its id and its slug): one change.
    else if (field.field === 'typeId' || field.field === 'typeSlug') parts.push(text('changed the type'));
    else parts.push(text(`changed ${field.field.split('.')[0]}`));
  }
  return [...new Set(parts)];
}

/** A diagram's field changes, counted per kind of change and element (`moved 2 boxes`). */
function diagramParts(fields: readonly Field[], spelling: Spelling): string[] {
  const { text } = spelling;
  const counts = new Map<string, Set<string>>();
  const count = (what: string, id: string) => {
    if (!counts.has(what)) counts.set(what, new Set());
    counts.get(what)!.add(id);
  };
  const other: string[] = [];
  for (const { field, old, new: now } of fields) {
    const [list, id, ...rest] = field.split('.');
    const prop = rest[0];
    if (list === 'componentInstances' && id !== undefined) {
      if (prop === undefined) count(old === null ? 'added box' : now === null ? 'removed box' : 'changed box', id);
      else if (prop === 'position') count('moved box', id);
      else if (prop === 'width' || prop === 'height') count('resized box', id);
      else count('changed box', id);
    } else if (list === 'relations' && id !== undefined) {
      if (prop === undefined) count(old === null ? 'added relation' : now === null ? 'removed relation' : 'changed relation', id);
      else if (prop === 'label')
        other.push(now === null || now === '' ? text('removed a relation label') : text('relabelled ') + quote(now, spelling));
      else count('changed relation', id);
    } else if (list === 'textareas' && id !== undefined) {
      if (prop === undefined) count(old === null ? 'added text area' : now === null ? 'removed text area' : 'edited text area', id);
      else count(prop === 'position' ? 'moved text area' : 'edited text area', id);
    } else if (field === 'name') other.push(text('renamed ') + fromTo(old, now, spelling));
    else if (field !== 'apiContext') other.push(text(`changed ${list}`));
  }
  const order = [
    'added box',
    'removed box',
    'moved box',
    'resized box',
    'changed box',
    'added relation',
    'removed relation',
    'changed relation',
    'added text area',
    'removed text area',
    'moved text area',
    'edited text area',
  ];
  const parts = order.filter((what) => counts.has(what)).map((what) => text(plural(what, counts.get(what)!.size)));
  return [...parts, ...new Set(other)];
}

function plural(what: string, n: number): string {
  const [verb, ...noun] = what.split(' ');
  const thing = noun.join(' ');
  const things = thing === 'box' ? 'boxes' : `${thing}s`;
  return `${verb} ${n} ${n === 1 ? thing : things}`;
}
