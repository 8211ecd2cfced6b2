/**
 * Editing a component's name and description in its panel: the pure step of one save. Like a
 * drop (./arrange.ts) it puts the next component into the draft, where the model's rules check
 * it before the one commit.
 */
import { ApiError, ModelError } from '../errors.js';
import type { Draft } from '../model/draft.js';
import { checkComponent } from '../model/rules.js';
import type { Component } from '../model/types.js';

export interface ComponentEdit {
  name: string;
  /** Empty: no description. */
  desc: string;
}

export function editComponent(draft: Draft, componentId: string, edit: ComponentEdit): Component {
  const stored = draft.base.components.get(componentId);
  if (!stored) throw new ApiError(404, `Component with id '${componentId}' does not exist.`);
  const name = edit.name.trim();
  if (name === '') throw new ModelError('A component needs a name.');
  // Browsers send line breaks in a textarea as CRLF; the model keeps plain LF.
  const desc = edit.desc.replace(/\r\n?/g, '\n').trim();
  const next: Component = { ...stored, name, desc: desc === '' ? null : desc };
  if (next.name === stored.name && next.desc === stored.desc) return stored;
  // Changed inside the service's own interface: no apiContext, so the API notice goes away.
  delete next.apiContext;
  const component = draft.put('component', next, true);
  checkComponent(draft.model, component);
  return component;
}

/** The save as a reviewer says it: `Renamed 'Shop' to 'Web Shop'`, `Described 'Web Shop'`. */
export function describeEdit(draft: Draft, componentId: string): string {
  const before = draft.base.components.get(componentId);
  const after = draft.model.components.get(componentId);
  if (!before || !after) return `Edited component '${componentId}'`;
  const renamed = before.name !== after.name;
  const described = before.desc !== after.desc;
  if (renamed && described) return `Renamed '${before.name}' to '${after.name}' and changed its description`;
  if (renamed) return `Renamed '${before.name}' to '${after.name}'`;
  return `Changed the description of '${after.name}'`;
}
