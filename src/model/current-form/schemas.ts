/**
 * Request shapes of the current form of the API (plural paths, issue 11), in the same
 * TypeBox subset as ../schemas.ts, so check-body.ts explains failures the same way.
 *
 * Each accepts the current form's spellings and the seed's (`componentId` or `component`,
 * `fromRef` or `fromComponentInstance`, tag ids or `{id}` objects, a placeholder string or
 * `{text, typeId}`); normalize.ts turns them into the one internal shape. A PATCH body is
 * merged into the stored resource first and the result is checked against these same
 * schemas, so a partial update fails exactly as the full write would.
 *
 * They also state, for the OpenAPI document, the rules the write step applies beyond shape:
 * the id a client chooses (clientId: a `pattern` and a `not`), one spelling of each relation
 * end required (`allOf`), and in descriptions what JSON Schema cannot say (two spellings sent
 * must agree). test/openapi-agreement.test.ts holds the document and the server to agreeing.
 */
import Type, { type Static, type TObject, type TSchema } from 'typebox';
import { wordedByWrite } from '../check-body.js';
import { CLIENT_ID_EXCLUDED, CLIENT_ID_PATTERN, RESERVED_IDS, WINDOWS_DEVICE } from '../ids.js';
import {
  AttributeInput,
  AttributeValueInput,
  oneOfSpellingsRequired,
  PositionInput,
  RefText,
  StateInput,
  TagInput,
  TextAreaInput,
} from '../schemas.js';
import { ALL_LEVELS } from '../types.js';

/** `T | null`, with what the field means said once for both. */
const Nullable = <T extends TSchema>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description === undefined ? {} : { description });

/**
 * An id a client chooses (docs/api.md §13) as JSON Schema: the constants of ids.ts, so that the
 * document, and a client generated from it, knows the rule. `not` takes what the pattern lets
 * through and the rule does not: `..`, a trailing `.`, the reserved path segments, Windows device
 * names. The write step (write/current.ts checkNewId) applies the same constants to an id that
 * names nothing yet and words the refusal (`Invalid id '<id>': …`): checkBody checks only that
 * the id is a string (wordedByWrite) and leaves the rule to it.
 */
function clientId(description: string) {
  return wordedByWrite(
    Type.String({
      pattern: CLIENT_ID_PATTERN.source,
      not: {
        anyOf: [
          ...CLIENT_ID_EXCLUDED.map((excluded) => ({ pattern: excluded.source })),
          ...RESERVED_IDS.map((reserved) => ({ const: reserved })),
          { pattern: WINDOWS_DEVICE.source },
        ],
      },
      description:
        `${description} An id is 1 to 100 characters of a-z, 0-9, \`.\`, \`_\` and \`-\`, starting with a letter or digit, ` +
        `without \`..\` and not ending in \`.\`; not ${RESERVED_IDS.map((id) => `\`${id}\``).join(', ')} (a path), nor a Windows ` +
        'device name (`con`, `prn`, `aux`, `nul`, `com0`–`com9`, `lpt0`–`lpt9`, alone or before a `.`). Ids are unique across the ' +
        'organization, all kinds and types included: an id taken is 409.',
    } as never),
  );
}

/** The id of a create (`POST /<plural>`). */
const NewId = Type.Optional(clientId("The new resource's id, chosen by the client; omitted, the service makes one."));
const Ref = Type.Optional(RefText);
const Desc = Type.Optional(Nullable(Type.String()));
const ApiContext = Type.Optional(Type.String());
const StringList = Type.Array(Type.String());
const Size = Type.Optional(Type.Integer({ minimum: 1, maximum: 100 }));

/**
 * The ref of a create (`POST /<plural>`): `null` is taken as no ref, as in an upsert-batch
 * element that creates (write/current.ts stripId), so the document allows it too.
 */
const CreateRef = Type.Optional(Type.Union([RefText, Type.Null()], { description: "The new resource's ref; `null` or omitted: none." }));

export const CurrentTag = Type.Object({ ...TagInput.properties, id: NewId, ref: CreateRef });
export const CurrentAttribute = Type.Object({ ...AttributeInput.properties, id: NewId, ref: CreateRef });

export const CurrentComponent = Type.Object({
  id: NewId,
  ref: CreateRef,
  name: Type.String(),
  desc: Desc,
  inlineDesc: Type.Optional(Type.Boolean()),
  state: Type.Optional(StateInput),
  typeId: Type.Optional(Nullable(Type.String(), 'The type, by id. Sent with `typeSlug`, both must name one type (else 400).')),
  typeSlug: Type.Optional(Nullable(Type.String(), 'The type, by slug. Sent with `typeId`, both must name one type (else 400).')),
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

/** The id of an element nested in a diagram: never the client's choice. */
const NestedId = (what: string) =>
  Type.Optional(
    Type.String({
      description: `The ${what}'s id as answered, to keep that ${what} of the stored diagram (an id the diagram does not have is 400); omitted, the ${what} is matched by \`ref\` or made anew.`,
    }),
  );

/** Two spellings of one field: either is taken, and sent both they must agree (fields.ts eitherSpelling). */
const sameAs = (other: string) => `\`${other}\` is another spelling of this field: sent both, they must be equal (else 400).`;

export const CurrentInstance = Type.Object({
  id: NestedId('instance'),
  ref: Ref,
  componentId: Type.Optional(
    Nullable(
      Type.String(),
      `The component the instance places, by id or ref (also a ref of this request's components); \`null\` or omitted: a placeholder. ${sameAs('component')}`,
    ),
  ),
  component: Type.Optional(Nullable(Type.String(), sameAs('componentId'))),
  placeholder: Type.Optional(Type.Union([Type.String(), PlaceholderObject, Type.Null()])),
  isContainer: Type.Optional(Type.Boolean({ description: 'A container instance cannot have a parent (400).' })),
  parentId: Type.Optional(
    Nullable(Type.String(), `The container instance of this diagram the instance sits in, by id or ref. ${sameAs('parent')}`),
  ),
  parent: Type.Optional(Nullable(Type.String(), sameAs('parentId'))),
  position: Type.Optional(PositionInput),
  width: Size,
  height: Size,
});
export type CurrentInstance = Static<typeof CurrentInstance>;

/** Text areas are the same in both forms. */
export const CurrentTextArea = TextAreaInput;

/** Where a relation starts or ends. */
const end = (which: 'from' | 'to') =>
  Type.String({
    description:
      `The component instance of this diagram the relation ${which === 'from' ? 'starts' : 'ends'} at, by its ref (also one this ` +
      `request gives an instance) or its id; one the diagram does not have is 400. Required, in this spelling or as ` +
      `\`${which}ComponentInstance\`. ${sameAs(`${which}ComponentInstance`)}`,
  });

/**
 * Each end is required in one spelling or the other (`allOf`: check-body.ts says `fromRef:
 * Required` when neither is sent); sent both, they must agree (normalize.ts).
 */
export const CurrentRelation = Type.Object(
  {
    id: NestedId('relation'),
    ref: Ref,
    fromRef: Type.Optional(end('from')),
    toRef: Type.Optional(end('to')),
    fromComponentInstance: Type.Optional(Type.String({ description: sameAs('fromRef') })),
    toComponentInstance: Type.Optional(Type.String({ description: sameAs('toRef') })),
    label: Type.Optional(Nullable(Type.String())),
    desc: Desc,
    linksTo: Type.Optional(StringList),
  },
  { allOf: [oneOfSpellingsRequired('fromRef', 'fromComponentInstance'), oneOfSpellingsRequired('toRef', 'toComponentInstance')] } as never,
);
export type CurrentRelation = Static<typeof CurrentRelation>;

export const CurrentDiagram = Type.Object({
  id: NewId,
  ref: CreateRef,
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
 * An element of upsert-batch and template: any part of the create body. What it leaves out
 * comes from the stored resource it names; one that names none is created, and the merged
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

/**
 * The body of `PATCH /<plural>/<id or ref>`: an update element without `id`, which the service
 * ignores there (the path names the resource), so the document does not hold it to the id rule.
 */
export const CURRENT_PATCH_SCHEMAS = {
  tag: patchOf(CURRENT_UPDATE_SCHEMAS.tag),
  attribute: patchOf(CURRENT_UPDATE_SCHEMAS.attribute),
  component: patchOf(CURRENT_UPDATE_SCHEMAS.component),
  diagram: patchOf(CURRENT_UPDATE_SCHEMAS.diagram),
} as const;

/** Any part of `schema`; `ref: null` removes the stored ref, as JSON Merge Patch reads a null. */
function updateOf<T extends TObject>(schema: T) {
  return Type.Partial(
    Type.Object({
      ...schema.properties,
      id: clientId(
        'The resource to update, by id; an id that no resource has creates the resource with this id, so it follows the rule of a new id.',
      ),
      ref: Type.Union([RefText, Type.Null()], { description: "The element's ref; `null` removes the stored one." }),
    }),
    {
      description:
        'Any part of the resource. An element whose `id` names a resource, or without `id` whose `ref` a stored one holds, updates it: the fields sent replace the stored ones, `null` clears. Any other element creates a resource, and needs what creating one needs (the fields the create body requires; else 400 `<index>.name: Required`).',
    },
  );
}

function patchOf<T extends TObject>(schema: T) {
  return Type.Omit(schema, ['id'], {
    description:
      'Any part of the resource: the fields sent replace the stored ones, `null` clears. An `id` sent here is ignored: the path names the resource.',
  });
}

/** `POST /api/external/template`: both arrays default to `[]`. */
export const TemplateBody = Type.Object({
  components: Type.Optional(Type.Array(CURRENT_UPDATE_SCHEMAS.component)),
  diagrams: Type.Optional(Type.Array(CURRENT_UPDATE_SCHEMAS.diagram)),
});
export type TemplateBody = Static<typeof TemplateBody>;
