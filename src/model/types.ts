/**
 * The organization model as stored in git and served over HTTP.
 * Field order in these interfaces is the order of the field tables in external-api.md;
 * files and responses are written in this order so that diffs stay minimal.
 */

export const STATES = ['DRAFT', 'ACTIVE', 'ARCHIVED'] as const;
export type State = (typeof STATES)[number];

export const TAG_COLORS = ['gray', 'red', 'orange', 'yellow', 'green', 'blue', 'purple'] as const;
export type TagColor = (typeof TAG_COLORS)[number];

export const ATTRIBUTE_TYPES = ['STRING', 'NUMBER', 'BOOLEAN', 'LINK', 'USERLIST', 'LIST'] as const;
export type AttributeType = (typeof ATTRIBUTE_TYPES)[number];

/** The levels of the seed's forms of the API. */
export const LEVELS = ['C1', 'C2', 'C3', 'C4'] as const;
/** The current form adds landscape (C0), deployment (D1) and process (P0); a level may also be null there. */
export const ALL_LEVELS = ['C0', 'C1', 'C2', 'C3', 'C4', 'D1', 'P0'] as const;
export type Level = (typeof ALL_LEVELS)[number];

export interface Organization {
  name: string;
  slug: string;
  /** E-mail addresses; the only valid values of USERLIST attributes. */
  members: string[];
}

export interface ComponentType {
  id: string;
  slug: string;
  name: string;
}

export interface Tag {
  id: string;
  ref?: string;
  name: string;
  desc: string | null;
  color: TagColor;
  apiContext?: string;
}

export interface Attribute {
  id: string;
  ref?: string;
  name: string;
  type: AttributeType;
  desc: string | null;
  required: boolean;
  /** Type slugs; empty when the attribute applies to every type. */
  forTypes: string[];
  apiContext?: string;
  /** Present only for type LIST. */
  list?: string[];
}

export type AttributeValueType = string | number | boolean | null;

export interface AttributeValue {
  id: string;
  value: AttributeValueType;
}

export interface Component {
  id: string;
  ref?: string;
  name: string;
  desc: string | null;
  state: State;
  typeId: string | null;
  apiContext?: string;
  linksTo: string[];
  attributes: AttributeValue[];
  /**
   * Fields of the current API form, absent when at their default (false, empty) so that
   * files written by the seed's forms stay as they were. The seed's forms neither read nor
   * write them; the current form does not read or write `linksTo` (components).
   */
  inlineDesc?: boolean;
  /** Tag ids. */
  tags?: string[];
  /** Diagram ids: the current form's `linksTo`. */
  linksToDiagrams?: string[];
}

export interface Position {
  x: number;
  y: number;
}

export interface ComponentInstance {
  id: string;
  ref?: string;
  /** Component id, or null for a placeholder. */
  component: string | null;
  placeholder: string;
  /** The type of a placeholder (the current form's `placeholder.typeId`); absent when none. */
  typeId?: string;
  isContainer: boolean;
  /** Id of the parent container instance in the same diagram. */
  parent: string | null;
  position: Position;
  width: number;
  height: number;
}

export interface TextArea {
  id: string;
  ref?: string;
  position: Position;
  width: number;
  text: string;
}

export interface Relation {
  id: string;
  ref?: string;
  fromComponentInstance: string;
  toComponentInstance: string;
  label: string | null;
  desc: string | null;
  /** Diagram ids. */
  linksTo: string[];
}

export interface Diagram {
  id: string;
  ref?: string;
  name: string;
  desc: string | null;
  state: State;
  /** Null only through the current API form. */
  level: Level | null;
  /** Tag ids. */
  tags: string[];
  componentInstances: ComponentInstance[];
  textareas: TextArea[];
  relations: Relation[];
  apiContext?: string;
}

/**
 * The whole model of one organization at one commit. Maps iterate in id (= creation) order.
 * They are read-only: a snapshot is shared by every request reading that commit, and a write
 * builds the next model beside it (src/model/draft.ts).
 */
export interface Model {
  organization: Organization;
  types: ReadonlyMap<string, ComponentType>;
  tags: ReadonlyMap<string, Tag>;
  attributes: ReadonlyMap<string, Attribute>;
  components: ReadonlyMap<string, Component>;
  diagrams: ReadonlyMap<string, Diagram>;
}

export type ResourceKind = 'type' | 'tag' | 'attribute' | 'component' | 'diagram';
