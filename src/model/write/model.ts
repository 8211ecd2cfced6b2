import { concerning } from '../../errors.js';
import { checkOrgSize, DEFAULT_LIMITS } from '../../limits/limits.js';
import type { ComponentInput, DiagramInput } from '../schemas.js';
import type { Component, Diagram } from '../types.js';
import { resolveTargets, type Draft } from '../draft.js';
import { checkComponent, checkDiagram } from '../rules.js';
import { buildComponent } from './components.js';
import { buildDiagram } from './diagrams.js';
import { componentReferences, diagramReferences } from './references.js';
import { nextTurn } from './turns.js';

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
  const componentRefs = componentReferences(draft, componentInputs, componentTargets);
  const diagramRefs = diagramReferences(draft, diagramInputs, diagramTargets);

  // A refusal names the element of the body it concerns: `element components.0 'Shop API'`.
  const diagramPath = componentPath === '' ? '' : 'diagrams.';
  const element = (path: string, i: number, name: string | undefined) => `element ${path}${i}${name === undefined ? '' : ` '${name}'`}`;
  const components = componentInputs.map((input, i) =>
    concerning(element(componentPath, i, input.name ?? (componentTargets[i].existing as Component | undefined)?.name), () =>
      draft.put('component',
        buildComponent(draft, input, componentTargets[i], componentRefs, `${componentPath}${i}`),
        input.apiContext !== undefined)),
  );
  checkOrgSize(draft.base.components.size, draft.model.components.size, draft.options.limits ?? DEFAULT_LIMITS);
  const diagrams: Diagram[] = [];
  for (const [i, input] of diagramInputs.entries()) {
    const diagram = await concerning(element(diagramPath, i, input.name), () =>
      buildDiagram(draft, input, diagramTargets[i], componentRefs, diagramRefs));
    diagrams.push(draft.put('diagram', diagram, input.apiContext !== undefined));
    await nextTurn(draft, diagram.componentInstances.length + diagram.relations.length);
  }
  for (const [i, component] of components.entries()) {
    concerning(element(componentPath, i, component.name), () => checkComponent(draft.model, component));
  }
  for (const [i, diagram] of diagrams.entries()) {
    concerning(element(diagramPath, i, diagram.name), () => checkDiagram(draft.model, diagram));
    await nextTurn(draft, diagram.componentInstances.length + diagram.relations.length);
  }
  return { components, diagrams };
}
