import type { ModelDiff } from '../history/diff.js';
import type { Organization } from '../model/types.js';

/**
 * A draft's changes as a reviewer says them: "added component Fraud Check", "on Payments C2:
 * moved 2 boxes, relabelled 'SQL'". Pure: the diff in, one sentence per resource out (and the
 * organization's own, which the diff does not carry, from the two organizations).
 */

const KIND_WORDS: Record<string, string> = {
  type: 'type',
  tag: 'tag',
  attribute: 'attribute',
  component: 'component',
  diagram: 'diagram',
};

export function describeChanges(diff: ModelDiff): string[] {
  const sentences: string[] = [];
  for (const added of diff.added) sentences.push(`added ${KIND_WORDS[added.kind]} ${added.name ?? added.id}`);
  for (const removed of diff.removed) sentences.push(`removed ${KIND_WORDS[removed.kind]} ${removed.name ?? removed.id}`);
  for (const changed of diff.changed) {
    const parts = changed.kind === 'diagram' ? diagramParts(changed.fields) : resourceParts(changed.fields);
    // apiContext goes unsaid beside other changes (every write that changes a resource sets it),
    // but a resource whose one change is its apiContext was changed all the same.
    sentences.push(`on ${changed.name ?? changed.id}: ${parts.length > 0 ? parts.join(', ') : 'changed apiContext'}`);
  }
  return sentences;
}

/**
 * A change of `organization.yaml` (its name, its members) as a reviewer says it. The
 * organization is no resource, so the diff of resources does not carry it; a draft pushed over
 * git may change it all the same, and a merge brings it into main.
 */
export function describeOrganizationChange(before: Organization, after: Organization): string[] {
  const sentences: string[] = [];
  if (before.name !== after.name) sentences.push(`renamed the organization ${quote(before.name)} to ${quote(after.name)}`);
  const added = after.members.filter((member) => !before.members.includes(member));
  const removed = before.members.filter((member) => !after.members.includes(member));
  if (added.length > 0) sentences.push(`added member${added.length === 1 ? '' : 's'} ${added.join(', ')}`);
  if (removed.length > 0) sentences.push(`removed member${removed.length === 1 ? '' : 's'} ${removed.join(', ')}`);
  const reordered = added.length + removed.length === 0 && before.members.join('\n') !== after.members.join('\n');
  if (reordered) sentences.push('reordered the members');
  if (before.slug !== after.slug) sentences.push(`changed the organization's slug ${quote(before.slug)} to ${quote(after.slug)}`);
  return sentences;
}

type Field = ModelDiff['changed'][number]['fields'][number];

function quote(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : value === null ? 'nothing' : JSON.stringify(value);
}

function resourceParts(fields: readonly Field[]): string[] {
  const parts: string[] = [];
  for (const field of fields) {
    if (field.field === 'apiContext') continue;
    if (field.field === 'name') parts.push(`renamed ${quote(field.old)} to ${quote(field.new)}`);
    else if (field.field === 'desc') parts.push('changed the description');
    else parts.push(`changed ${field.field.split('.')[0]}`);
  }
  return [...new Set(parts)];
}

/** A diagram's field changes, counted per kind of change and element (`moved 2 boxes`). */
function diagramParts(fields: readonly Field[]): string[] {
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
      else if (prop === 'label') other.push(now === null || now === '' ? 'removed a relation label' : `relabelled ${quote(now)}`);
      else count('changed relation', id);
    } else if (list === 'textareas' && id !== undefined) {
      if (prop === undefined) count(old === null ? 'added text area' : now === null ? 'removed text area' : 'edited text area', id);
      else count(prop === 'position' ? 'moved text area' : 'edited text area', id);
    } else if (field === 'name') other.push(`renamed ${quote(old)} to ${quote(now)}`);
    else if (field !== 'apiContext') other.push(`changed ${list}`);
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
  const parts = order.filter((what) => counts.has(what)).map((what) => plural(what, counts.get(what)!.size));
  return [...parts, ...new Set(other)];
}

function plural(what: string, n: number): string {
  const [verb, ...noun] = what.split(' ');
  const thing = noun.join(' ');
  const things = thing === 'box' ? 'boxes' : `${thing}s`;
  return `${verb} ${n} ${n === 1 ? thing : things}`;
}
