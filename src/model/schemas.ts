/**
 * Request-body schemas of the external API (external-api.md §2, CONTRACT.md §3–§4).
 *
 * TypeBox is the single source of truth: these declarations give the static input types
 * (`Static<typeof X>`), the compiled accept check and, through check-body.ts, the error
 * messages (which are derived by walking these same JSON Schema objects).
 *
 * Only shape is checked here: JSON types, required fields, enums, integer ranges.
 * Semantic rules (component `name` required on create, `list` only for LIST attributes,
 * ids that must exist, `parent`/`parentId` agreeing, …) are checked by the service.
 *
 * Unknown fields are allowed and ignored: they are left in place (not stripped) and never
 * looked at — neither the compiled check nor the error walker descends into them. Code that
 * consumes a checked body must therefore copy the fields it knows, never spread the input.
 *
 * The schemas deliberately use only this small subset of JSON Schema, which is what
 * check-body.ts knows how to explain: `type` (object with `properties`/`required`, array
 * with `items`, string, number, integer with `minimum`/`maximum`, boolean, null), `enum` of
 * strings, `anyOf` of those, `{}` (anything), and on an object `allOf` of
 * oneOfSpellingsRequired (a field required in either of two spellings).
 */
import Type, { type Static, type TSchema } from 'typebox';
import { ATTRIBUTE_TYPES, LEVELS, STATES, TAG_COLORS } from './types.js';

// ---------------------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------------------

/** `T | null`; a wrong type reports T's message (`Expected string, received number`). */
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const Id = Type.Optional(Type.String());
/** A ref names a resource across runs of a pipeline: an empty one (an unset variable) would make every run's element the same one. */
export const RefText = Type.String({ minLength: 1 });
const Ref = Type.Optional(RefText);
const Desc = Type.Optional(Nullable(Type.String()));

/**
 * A field sent in either of two spellings (a relation's `fromRef` or `fromComponentInstance`),
 * one of them required: put in an object schema's `allOf`. check-body.ts explains a body with
 * neither as `<first>: Required`, at the first spelling's place among the object's fields.
 */
export function oneOfSpellingsRequired(first: string, second: string) {
  return { anyOf: [{ required: [first] }, { required: [second] }] };
}

const ApiContext = Type.Optional(Type.String());
const StringList = Type.Array(Type.String());

export const StateInput = Type.Enum(STATES);
export const TagColorInput = Type.Enum(TAG_COLORS);
export const AttributeTypeInput = Type.Enum(ATTRIBUTE_TYPES);
export const LevelInput = Type.Enum(LEVELS);

/**
 * How far from the origin a position may be. Far beyond any drawing, and small enough that the
 * layout's arithmetic on it (sums of positions and sizes) stays exact.
 */
export const POSITION_LIMIT = 1_000_000;

/** Editor grid position: whole numbers, negative allowed. */
const Coordinate = Type.Integer({ minimum: -POSITION_LIMIT, maximum: POSITION_LIMIT });
export const PositionInput = Type.Object({
  x: Coordinate,
  y: Coordinate,
});
export type PositionInput = Static<typeof PositionInput>;

/** Width/height of instances and text areas: whole numbers 1 to 100. */
const Size = Type.Optional(Type.Integer({ minimum: 1, maximum: 100 }));

// ---------------------------------------------------------------------------------------
// Elements (field order = the order of the field tables in external-api.md; errors of one
// element are reported in this order)
// ---------------------------------------------------------------------------------------

export const TagInput = Type.Object({
  id: Id,
  ref: Ref,
  name: Type.String(),
  desc: Desc,
  color: TagColorInput,
  apiContext: ApiContext,
});
export type TagInput = Static<typeof TagInput>;

export const AttributeInput = Type.Object({
  id: Id,
  ref: Ref,
  name: Type.String(),
  type: AttributeTypeInput,
  desc: Desc,
  required: Type.Optional(Type.Boolean()),
  forTypes: Type.Optional(StringList),
  apiContext: ApiContext,
  /**
   * A LIST attribute's options. The rule (rules.ts checkAttribute) is the resulting attribute's,
   * after a PATCH merges in the stored one, so the schema says it in words, as the texts do.
   */
  list: Type.Optional(
    Type.Array(Type.String(), {
      description:
        'The options of a `LIST` attribute: required when `type` is `LIST` (`A LIST attribute needs a list of values.`), refused for any other type (`Only a LIST attribute may have a list; …`), each option at most once (`Duplicate list values are not allowed, …`).',
    }),
  ),
});
export type AttributeInput = Static<typeof AttributeInput>;

/** An attribute value: `value` must be present (`null` is a value; missing is `Required`). */
export const AttributeValueInput = Type.Object({
  id: Type.String(),
  value: Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]),
});
export type AttributeValueInput = Static<typeof AttributeValueInput>;

export const ComponentInput = Type.Object({
  id: Id,
  ref: Ref,
  /** Required on create: a semantic rule of the service, not checked here. */
  name: Type.Optional(Type.String()),
  desc: Desc,
  state: Type.Optional(StateInput),
  typeId: Type.Optional(Nullable(Type.String())),
  typeSlug: Type.Optional(Nullable(Type.String())),
  apiContext: ApiContext,
  linksTo: Type.Optional(StringList),
  attributes: Type.Optional(Type.Array(AttributeValueInput)),
  /** The current API form's fields, accepted here too (issue 11); omitted, the stored values stay. */
  inlineDesc: Type.Optional(Type.Boolean()),
  tags: Type.Optional(StringList),
});
export type ComponentInput = Static<typeof ComponentInput>;

/** All fields optional: `{}` is a generic placeholder. */
export const ComponentInstanceInput = Type.Object({
  id: Id,
  ref: Ref,
  component: Type.Optional(Nullable(Type.String())),
  /** The current API form's name for `component` (issue 11); if both are sent they must agree. */
  componentId: Type.Optional(Nullable(Type.String())),
  placeholder: Type.Optional(Nullable(Type.String())),
  isContainer: Type.Optional(Type.Boolean()),
  parent: Type.Optional(Nullable(Type.String())),
  parentId: Type.Optional(Nullable(Type.String())),
  position: Type.Optional(PositionInput),
  width: Size,
  height: Size,
});
export type ComponentInstanceInput = Static<typeof ComponentInstanceInput>;

export const TextAreaInput = Type.Object({
  id: Id,
  ref: Ref,
  position: Type.Optional(PositionInput),
  width: Size,
  text: Type.Optional(Nullable(Type.String())),
});
export type TextAreaInput = Static<typeof TextAreaInput>;

export const RelationInput = Type.Object({
  id: Id,
  ref: Ref,
  fromComponentInstance: Type.String(),
  toComponentInstance: Type.String(),
  label: Type.Optional(Nullable(Type.String())),
  desc: Desc,
  linksTo: Type.Optional(StringList),
});
export type RelationInput = Static<typeof RelationInput>;

/** A diagram's tag on input: `{ "id": "<tag id>" }` (other fields ignored). */
export const DiagramTagInput = Type.Object({
  id: Type.String(),
});
export type DiagramTagInput = Static<typeof DiagramTagInput>;

export const DiagramInput = Type.Object({
  id: Id,
  ref: Ref,
  name: Type.String(),
  desc: Desc,
  state: Type.Optional(StateInput),
  level: LevelInput,
  /** Read-only (`<public url>/diagrams/<id>` in responses); accepted with any value and ignored. */
  url: Type.Optional(Type.Unknown()),
  tags: Type.Optional(Type.Array(DiagramTagInput)),
  componentInstances: Type.Optional(Type.Array(ComponentInstanceInput)),
  textareas: Type.Optional(Type.Array(TextAreaInput)),
  relations: Type.Optional(Type.Array(RelationInput)),
  apiContext: ApiContext,
});
export type DiagramInput = Static<typeof DiagramInput>;

// ---------------------------------------------------------------------------------------
// Request bodies
// ---------------------------------------------------------------------------------------

export const TagBody = Type.Array(TagInput);
export type TagBody = Static<typeof TagBody>;

export const AttributeBody = Type.Array(AttributeInput);
export type AttributeBody = Static<typeof AttributeBody>;

export const ComponentBody = Type.Array(ComponentInput);
export type ComponentBody = Static<typeof ComponentBody>;

export const DiagramBody = Type.Array(DiagramInput);
export type DiagramBody = Static<typeof DiagramBody>;

/** The model endpoint's body: one object with two optional arrays. */
export const ModelBody = Type.Object({
  components: Type.Optional(Type.Array(ComponentInput)),
  diagrams: Type.Optional(Type.Array(DiagramInput)),
});
export type ModelBody = Static<typeof ModelBody>;
