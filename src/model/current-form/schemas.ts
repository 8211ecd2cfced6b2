/**
 * Request shapes of the current form of the API (plural paths, issue 11), in the same
 * TypeBox subset as ../schemas.ts, so check-body.ts explains failures the same way.
 *
 * Each accepts the current form's spellings and the seed's (`componentId` or `component`,
 * `fromRef` or `fromComponentInstance`, tag ids or `{id}` objects, a placeholder string or
 * `{text, typeId}`); normalize.ts turns them into the one internal shape. A PATCH body is
 * merged into the stored resource first and the result is checked against these same
 * schemas, so a partial update fails exactly as the full write would.
 */
import Type, { type Static, type TObject, type TSchema } from 'typebox';
import { AttributeInput, AttributeValueInput, PositionInput, RefText, StateInput, TagInput, TextAreaInput } from '../schemas.js';
import { ALL_LEVELS } from '../types.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Id = Type.Optional(Type.String());
const Ref = Type.Optional(RefText);
const Desc = Type.Optional(Nullable(Type.String()));
const ApiContext = Type.Optional(Type.String());
const StringList = Type.Array(Type.String());
const Size = Type.Optional(Type.Integer({ minimum: 1, maximum: 100 }));

export const CurrentTag = TagInput;
export const CurrentAttribute = AttributeInput;

export const CurrentComponent = Type.Object({
  id: Id,
  ref: Ref,
  name: Type.String(),
  desc: Desc,
  inlineDesc: Type.Optional(Type.Boolean()),
  state: Type.Optional(StateInput),
  typeId: Type.Optional(Nullable(Type.String())),
  typeSlug: Type.Optional(Nullable(Type.String())),
  apiContext: ApiContext,
  /** Tag ids. */
  tags: Type.Optional(StringList),
  /** Diagram ids (the seed's forms' `linksTo` names components: see docs/api.md). */
  linksTo: Type.Optional(StringList),
  attributes: Type.Optional(Type.Array(AttributeValueInput)),
});
export type CurrentComponent = Static<typeof CurrentComponent>;

export const PlaceholderObject = Type.Object({
  text: Type.Optional(Nullable(Type.String())),
  typeId: Type.Optional(Nullable(Type.String())),
});

export const CurrentInstance = Type.Object({
  id: Id,
  ref: Ref,
  componentId: Type.Optional(Nullable(Type.String())),
  component: Type.Optional(Nullable(Type.String())),
  placeholder: Type.Optional(Type.Union([Type.String(), PlaceholderObject, Type.Null()])),
  isContainer: Type.Optional(Type.Boolean()),
  parentId: Type.Optional(Nullable(Type.String())),
  parent: Type.Optional(Nullable(Type.String())),
  position: Type.Optional(PositionInput),
  width: Size,
  height: Size,
});
export type CurrentInstance = Static<typeof CurrentInstance>;

/** Text areas are the same in both forms. */
export const CurrentTextArea = TextAreaInput;

/** One end is required in either spelling: normalize.ts says `fromRef: Required` when neither is sent. */
export const CurrentRelation = Type.Object({
  id: Id,
  ref: Ref,
  fromRef: Type.Optional(Type.String()),
  toRef: Type.Optional(Type.String()),
  fromComponentInstance: Type.Optional(Type.String()),
  toComponentInstance: Type.Optional(Type.String()),
  label: Type.Optional(Nullable(Type.String())),
  desc: Desc,
  linksTo: Type.Optional(StringList),
});
export type CurrentRelation = Static<typeof CurrentRelation>;

export const CurrentDiagram = Type.Object({
  id: Id,
  ref: Ref,
  name: Type.String(),
  desc: Desc,
  state: Type.Optional(StateInput),
  level: Type.Optional(Nullable(Type.Enum(ALL_LEVELS))),
  url: Type.Optional(Type.Unknown()),
  /** Tag ids; the seed's `{id}` objects are accepted too. */
  tags: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Object({ id: Type.String() })]))),
  componentInstances: Type.Optional(Type.Array(CurrentInstance)),
  textareas: Type.Optional(Type.Array(CurrentTextArea)),
  relations: Type.Optional(Type.Array(CurrentRelation)),
  apiContext: ApiContext,
});
export type CurrentDiagram = Static<typeof CurrentDiagram>;

export const CURRENT_SCHEMAS = {
  tag: CurrentTag,
  attribute: CurrentAttribute,
  component: CurrentComponent,
  diagram: CurrentDiagram,
} as const;
export type WritableKind = keyof typeof CURRENT_SCHEMAS;

/**
 * An element of PATCH, upsert-batch and template: any part of the create body. What it leaves
 * out comes from the stored resource it names; one that names none is created, and the merged
 * element is then checked against CURRENT_SCHEMAS (a new component without `name` is refused
 * there). The OpenAPI document describes these requests with these schemas, so a generated
 * client accepts every partial update the service does.
 */
export const CURRENT_UPDATE_SCHEMAS = {
  tag: updateOf(CurrentTag),
  attribute: updateOf(CurrentAttribute),
  component: updateOf(CurrentComponent),
  diagram: updateOf(CurrentDiagram),
} as const;

/** Any part of `schema`; `ref: null` removes the stored ref, as JSON Merge Patch reads a null. */
function updateOf<T extends TObject>(schema: T) {
  return Type.Partial(
    Type.Object({
      ...schema.properties,
      ref: Type.Union([RefText, Type.Null()], { description: "The element's ref; `null` removes the stored one." }),
    }),
  );
}

/** `POST /api/external/template`: both arrays default to `[]`. */
export const TemplateBody = Type.Object({
  components: Type.Optional(Type.Array(CURRENT_UPDATE_SCHEMAS.component)),
  diagrams: Type.Optional(Type.Array(CURRENT_UPDATE_SCHEMAS.diagram)),
});
export type TemplateBody = Static<typeof TemplateBody>;
