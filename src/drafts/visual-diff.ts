import type { Component, ComponentInstance, Diagram, Model, Relation, TextArea } from '../model/types.js';
import { same } from './merge.js';

/**
 * The visual diff of one diagram (CONTRACT §8): the diagram as the draft has it, on the
 * draft's layout, plus what the draft removed (where it stood before), with every element
 * that the draft adds, removes or changes marked. Pure: the diagram before and after, and the
 * models they live in, in; a diagram to draw, the model to draw it with, and the marks out.
 */

export type Mark = 'added' | 'removed' | 'changed';

export interface VisualDiff {
  /** The draft's diagram with the removed elements put back (one the draft deleted: as it was). */
  diagram: Diagram;
  /** The draft's model, plus the components only removed instances still show. */
  model: Model;
  /** Element id (instance, relation, text area) → how the draft changed it. */
  marks: ReadonlyMap<string, Mark>;
}

/**
 * A diagram the draft added (none before) has everything marked added; one the draft deleted
 * (none after) is drawn as it was with everything marked removed: on the draft's side it is
 * that diagram with nothing left on it.
 */
export function visualDiff(before: { diagram: Diagram | undefined; model: Model }, after: { diagram: Diagram; model: Model }): VisualDiff;
export function visualDiff(before: { diagram: Diagram; model: Model }, after: { diagram: Diagram | undefined; model: Model }): VisualDiff;
export function visualDiff(
  before: { diagram: Diagram | undefined; model: Model },
  after: { diagram: Diagram | undefined; model: Model },
): VisualDiff {
  const marks = new Map<string, Mark>();
  const old = before.diagram ?? { componentInstances: [], relations: [], textareas: [] };
  const now = after.diagram ?? { ...before.diagram!, componentInstances: [], relations: [], textareas: [] };
  const changedComponent = (instance: ComponentInstance, previous: ComponentInstance) =>
    instance.component !== null &&
    instance.component === previous.component &&
    !same(componentShown(after.model.components.get(instance.component)), componentShown(before.model.components.get(instance.component)));
  const instances = compareList(old.componentInstances, now.componentInstances, marks, changedComponent);
  const relations = compareList<Relation>(old.relations, now.relations, marks);
  const textareas = compareList<TextArea>(old.textareas, now.textareas, marks);

  // Components that only a removed instance still shows are drawn from the model before.
  const components = new Map<string, Component>();
  for (const instance of instances) {
    if (instance.component === null || after.model.components.has(instance.component)) continue;
    const component = before.model.components.get(instance.component);
    if (component) components.set(component.id, component);
  }
  const model: Model =
    components.size === 0 ? after.model : { ...after.model, components: new Map([...after.model.components, ...components]) };
  return { diagram: { ...now, componentInstances: instances, relations, textareas }, model, marks };
}

/** What of a component its box shows (its name and type), or whether it exists at all. */
function componentShown(component: Component | undefined) {
  return component === undefined ? undefined : { name: component.name, typeId: component.typeId };
}

/** The draft's items in its order, then those it removed; each marked where it differs. */
function compareList<T extends { id: string }>(
  before: readonly T[],
  after: readonly T[],
  marks: Map<string, Mark>,
  alsoChanged?: (item: T, previous: T) => boolean,
): T[] {
  const previous = new Map(before.map((item) => [item.id, item]));
  const present = new Set(after.map((item) => item.id));
  for (const item of after) {
    const was = previous.get(item.id);
    if (was === undefined) marks.set(item.id, 'added');
    else if (!same(was, item) || alsoChanged?.(item, was)) marks.set(item.id, 'changed');
  }
  const removed = before.filter((item) => !present.has(item.id));
  for (const item of removed) marks.set(item.id, 'removed');
  return [...after, ...removed];
}
