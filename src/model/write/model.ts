import { concerning, quotedName } from '../../errors.js';
import { checkOrgSize, DEFAULT_LIMITS } from '../../limits/limits.js';
import type { ComponentInput, DiagramInput } from '../schemas.js';
import type { Component, Diagram } from '../types.js';
import { resolveTargets, type Draft, type Target } from '../draft.js';
import { checkComponent, checkDiagram } from '../rules.js';
import { buildComponent, type ComponentExtras } from './components.js';
import { buildDiagram, type DiagramExtras, type DiagramWrite } from './diagrams.js';
import { componentReferences, diagramReferences } from './references.js';
import { nextTurn, turnIfDue } from './turns.js';

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
  const componentTargets = await resolveTargets(draft, 'component', componentInputs);
  const diagramTargets = await resolveTargets(draft, 'diagram', diagramInputs);
  return writeResolved(
    draft,
    componentInputs.map((input, i) => ({ input, target: componentTargets[i] })),
    diagramInputs.map((input, i) => ({ input, target: diagramTargets[i] })),
    componentPath,
  );
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
  /** How the body names its elements: `` (an array), `components.` (the model), or null (one object). */
  componentPath: string | null,
): Promise<{ components: Component[]; diagrams: Diagram[] }> {
  const componentRefs = componentReferences(
    draft,
    componentItems.map((c) => c.input),
    componentItems.map((c) => c.target),
  );
  const diagramRefs = diagramReferences(
    draft,
    diagramItems.map((d) => d.input),
    diagramItems.map((d) => d.target),
  );

  // A refusal names the element of the body it concerns: `element components.0 'Shop API'`,
  // or, for a body of one object, `component 'Shop API'`.
  const diagramPath = componentPath === null ? null : componentPath === '' ? '' : 'diagrams.';
  const named = (name: string | undefined) => (name === undefined ? '' : ` ${quotedName(name)}`);
  const element = (path: string | null, i: number, name: string | undefined, kind: string) =>
    path === null ? `${kind}${named(name)}` : `element ${path}${i}${named(name)}`;
  const components: Component[] = [];
  for (const [i, { input, target, extras }] of componentItems.entries()) {
    components.push(
      concerning(element(componentPath, i, input.name ?? (target.existing as Component | undefined)?.name, 'component'), () =>
        draft.put(
          'component',
          buildComponent(draft, input, target, componentRefs, componentPath === null ? '' : `${componentPath}${i}`, extras, diagramRefs),
          input.apiContext !== undefined,
        ),
      ),
    );
    await turnIfDue(draft);
  }
  checkOrgSize(draft.base.components.size, draft.model.components.size, draft.options.limits ?? DEFAULT_LIMITS);
  const diagrams: Diagram[] = [];
  for (const [i, { input, target, extras }] of diagramItems.entries()) {
    const diagram = await concerning(element(diagramPath, i, input.name, 'diagram'), () =>
      buildDiagram(draft, input, target, componentRefs, diagramRefs, extras),
    );
    diagrams.push(draft.put('diagram', diagram, input.apiContext !== undefined));
    await nextTurn(draft, diagram.componentInstances.length + diagram.relations.length);
  }
  for (const [i, component] of components.entries()) {
    concerning(element(componentPath, i, component.name, 'component'), () => checkComponent(draft.model, component));
    await turnIfDue(draft);
  }
  for (const [i, diagram] of diagrams.entries()) {
    concerning(element(diagramPath, i, diagram.name, 'diagram'), () => checkDiagram(draft.model, diagram));
    await nextTurn(draft, diagram.componentInstances.length + diagram.relations.length);
  }
  return { components, diagrams };
}
