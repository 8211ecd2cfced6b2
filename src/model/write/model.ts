import type { ComponentInput, DiagramInput } from '../schemas.js';
import type { Component, Diagram } from '../types.js';
import { resolveTargets, type Draft, type Target } from '../draft.js';
import { checkComponent, checkDiagram } from '../rules.js';
import { buildComponent, type ComponentExtras } from './components.js';
import { buildDiagram, type DiagramExtras, type DiagramWrite } from './diagrams.js';
import { componentReferences, diagramReferences } from './references.js';

export interface ModelWrite {
  components?: ComponentInput[];
  diagrams?: DiagramInput[];
}

/**
 * Components and diagrams of one request, written together: the component, diagram and model
 * endpoints all come here, so a ref defined anywhere in a request can be used anywhere in it.
 * `componentPath` says how the body names its components in error texts (`` → `0`, `components.` → `components.0`).
 */
export async function writeModel(
  draft: Draft,
  body: ModelWrite,
  componentPath: string,
): Promise<{ components: Component[]; diagrams: Diagram[] }> {
  const componentInputs = body.components ?? [];
  const diagramInputs = body.diagrams ?? [];
  const componentTargets = resolveTargets(draft, 'component', componentInputs);
  const diagramTargets = resolveTargets(draft, 'diagram', diagramInputs);
  return writeResolved(draft,
    componentInputs.map((input, i) => ({ input, target: componentTargets[i] })),
    diagramInputs.map((input, i) => ({ input, target: diagramTargets[i] })),
    componentPath);
}

export interface ComponentItem {
  input: ComponentInput;
  target: Target;
  /** The current form's own fields; absent for the seed's forms, which keep them as stored. */
  extras?: ComponentExtras;
}

export interface DiagramItem {
  input: DiagramWrite;
  target: Target;
  extras?: DiagramExtras;
}

/**
 * Writes components and diagrams whose targets are decided: by resolveTargets for the seed's
 * forms, by src/model/write/current.ts for the current form (client-chosen ids, partial
 * updates). Either way every element is built and checked here, by the same rules.
 */
export async function writeResolved(
  draft: Draft,
  componentItems: ComponentItem[],
  diagramItems: DiagramItem[],
  componentPath: string,
): Promise<{ components: Component[]; diagrams: Diagram[] }> {
  const componentRefs = componentReferences(draft, componentItems.map((c) => c.input), componentItems.map((c) => c.target));
  const diagramRefs = diagramReferences(draft, diagramItems.map((d) => d.input), diagramItems.map((d) => d.target));

  const components = componentItems.map(({ input, target, extras }, i) =>
    draft.put('component',
      buildComponent(draft, input, target, componentRefs, `${componentPath}${i}`, extras, diagramRefs),
      input.apiContext !== undefined),
  );
  const diagrams: Diagram[] = [];
  for (const { input, target, extras } of diagramItems) {
    const diagram = await buildDiagram(draft, input, target, componentRefs, diagramRefs, extras);
    diagrams.push(draft.put('diagram', diagram, input.apiContext !== undefined));
  }
  for (const component of components) checkComponent(draft.model, component);
  for (const diagram of diagrams) checkDiagram(draft.model, diagram);
  return { components, diagrams };
}
