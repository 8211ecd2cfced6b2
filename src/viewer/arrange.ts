/**
 * Arranging a diagram by hand: the pure step of one drop in the viewer. It builds the next
 * diagram from the stored one and puts it into the draft like every API write, where the
 * model's own rules check it (src/model/rules.ts) before the one commit is made.
 */
import Type, { type Static } from 'typebox';
import { ApiError, ModelError } from '../errors.js';
import type { Draft } from '../model/draft.js';
import { POSITION_LIMIT, PositionInput } from '../model/schemas.js';
import { checkDiagram } from '../model/rules.js';
import type { ComponentInstance, Diagram } from '../model/types.js';

const Size = Type.Optional(Type.Integer({ minimum: 1, maximum: 100 }));

/** One drop: an instance or text area moved (and its children with it), resized, or re-parented. */
export const ArrangeInput = Type.Object({
  kind: Type.Enum(['instance', 'textarea']),
  id: Type.String(),
  position: PositionInput,
  width: Size,
  height: Size,
  /** Instances only: the container it now sits in, or null; omitted keeps the parent. */
  parent: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
export type ArrangeInput = Static<typeof ArrangeInput>;

export function arrangeDiagram(draft: Draft, diagramId: string, move: ArrangeInput): Diagram {
  const stored = draft.base.diagrams.get(diagramId);
  if (!stored) throw new ApiError(404, `Diagram with id '${diagramId}' does not exist.`);
  let next: Diagram;
  if (move.kind === 'textarea') {
    if (move.height !== undefined) throw new ModelError('A text area has no height: it follows from its text.');
    if (move.parent !== undefined) throw new ModelError('A text area has no parent.');
    if (!stored.textareas.some((t) => t.id === move.id))
      throw new ModelError(`Text area with id '${move.id}' does not exist in this diagram.`);
    next = {
      ...stored,
      textareas: stored.textareas.map((t) => (t.id === move.id ? { ...t, position: move.position, width: move.width ?? t.width } : t)),
    };
  } else {
    const moved = stored.componentInstances.find((i) => i.id === move.id);
    if (!moved) throw new ModelError(`Component instance with id '${move.id}' does not exist in this diagram.`);
    const dx = move.position.x - moved.position.x;
    const dy = move.position.y - moved.position.y;
    const place = (i: ComponentInstance): ComponentInstance => {
      if (i.id === move.id) {
        return {
          ...i,
          position: move.position,
          width: move.width ?? i.width,
          height: move.height ?? i.height,
          parent: move.parent === undefined ? i.parent : move.parent,
        };
      }
      // A container carries its children along: they belong inside its box.
      if (moved.isContainer && i.parent === moved.id && (dx !== 0 || dy !== 0))
        return { ...i, position: carried(moved, i, { x: i.position.x + dx, y: i.position.y + dy }) };
      return i;
    };
    next = { ...stored, componentInstances: stored.componentInstances.map(place) };
  }
  // A drop where it was picked up changes nothing and makes no commit.
  if (JSON.stringify(next) === JSON.stringify(stored)) return stored;
  // Changed inside the service's own interface, not through the API: no apiContext (API document §2).
  delete next.apiContext;
  const diagram = draft.put('diagram', next, true);
  checkDiagram(draft.model, diagram);
  return diagram;
}

/**
 * A child's position once its container has moved. Beyond what a request may send (the schema's
 * ±POSITION_LIMIT) the diagram could no longer be read and written back unchanged, so such a drop
 * is refused rather than a child stored there (or clamped out of its place in the container).
 */
function carried(container: ComponentInstance, child: ComponentInstance, position: { x: number; y: number }): { x: number; y: number } {
  for (const axis of ['x', 'y'] as const) {
    if (Math.abs(position[axis]) > POSITION_LIMIT) {
      throw new ModelError(
        `Moving '${container.ref ?? container.id}' there would carry its child '${child.ref ?? child.id}' to ${axis} ${position[axis]}, ` +
          `beyond the ±${POSITION_LIMIT} a position may hold: nothing was moved.`,
      );
    }
  }
  return position;
}

/** The drop as a reviewer says it, for its commit's title: `Moved 'Web Shop' on 'Shop - Containers'`. */
export function describeArrange(draft: Draft, diagramId: string, move: ArrangeInput): string {
  const before = draft.base.diagrams.get(diagramId);
  const after = draft.model.diagrams.get(diagramId) ?? before;
  const on = `on '${after?.name ?? diagramId}'`;
  if (move.kind === 'textarea') {
    const was = before?.textareas.find((t) => t.id === move.id);
    const firstLine = (was?.text ?? '').split('\n')[0]!.slice(0, 40);
    const what = firstLine === '' ? 'a text area' : `the text area '${firstLine}'`;
    return `${was && move.width !== undefined && move.width !== was.width ? 'Resized' : 'Moved'} ${what} ${on}`;
  }
  const label = (instance: ComponentInstance | undefined) => {
    if (instance === undefined) return 'an element';
    const name = instance.component === null ? instance.placeholder : (draft.model.components.get(instance.component)?.name ?? '');
    if (name !== '') return `'${name}'`;
    return instance.isContainer ? 'a container' : 'a placeholder';
  };
  const was = before?.componentInstances.find((i) => i.id === move.id);
  const now = after?.componentInstances.find((i) => i.id === move.id);
  const moved = was !== undefined && now !== undefined && (was.position.x !== now.position.x || was.position.y !== now.position.y);
  const resized = was !== undefined && now !== undefined && (was.width !== now.width || was.height !== now.height);
  if (was !== undefined && now !== undefined && was.parent !== now.parent) {
    const into = now.parent === null ? 'out of its container' : `into ${label(after?.componentInstances.find((i) => i.id === now.parent))}`;
    return `Moved ${label(now)} ${into} ${on}`;
  }
  const verb = moved && resized ? 'Moved and resized' : resized ? 'Resized' : 'Moved';
  return `${verb} ${label(now ?? was)} ${on}`;
}
