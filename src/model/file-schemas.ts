import Type, { type Static, type TSchema } from 'typebox';
import { AttributeTypeInput, StateInput, TagColorInput } from './schemas.js';
import { ALL_LEVELS } from './types.js';
import { checkBody, SchemaError } from './check-body.js';
import { FileError, type StoredKind } from './files.js';

/**
 * The shapes of the stored YAML files. Checked on load so that a repository changed behind
 * the service's back is reported, file by file, instead of being served half-broken.
 */

const Id = Type.String();
const Text = Type.Union([Type.String(), Type.Null()]);
const Optional = Type.Optional;
const Coordinate = Type.Integer();
const Size = Type.Integer({ minimum: 1, maximum: 100 });
const Position = Type.Object({ x: Coordinate, y: Coordinate });

export const OrganizationFile = Type.Object({
  name: Type.String(),
  slug: Type.String(),
  members: Type.Array(Type.String()),
});

export const FILE_SCHEMAS = {
  type: Type.Object({ id: Id, slug: Type.String(), name: Type.String() }),
  tag: Type.Object({
    id: Id,
    ref: Optional(Type.String()),
    name: Type.String(),
    desc: Text,
    color: TagColorInput,
    apiContext: Optional(Type.String()),
  }),
  attribute: Type.Object({
    id: Id,
    ref: Optional(Type.String()),
    name: Type.String(),
    type: AttributeTypeInput,
    desc: Text,
    required: Type.Boolean(),
    forTypes: Type.Array(Type.String()),
    apiContext: Optional(Type.String()),
    list: Optional(Type.Array(Type.String())),
  }),
  component: Type.Object({
    id: Id,
    ref: Optional(Type.String()),
    name: Type.String(),
    desc: Text,
    state: StateInput,
    typeId: Type.Union([Id, Type.Null()]),
    apiContext: Optional(Type.String()),
    linksTo: Type.Array(Id),
    attributes: Type.Array(
      Type.Object({
        id: Id,
        value: Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]),
      }),
    ),
    inlineDesc: Optional(Type.Boolean()),
    tags: Optional(Type.Array(Id)),
    linksToDiagrams: Optional(Type.Array(Id)),
  }),
  diagram: Type.Object({
    id: Id,
    ref: Optional(Type.String()),
    name: Type.String(),
    desc: Text,
    state: StateInput,
    level: Type.Union([Type.Enum(ALL_LEVELS), Type.Null()]),
    tags: Type.Array(Id),
    componentInstances: Type.Array(
      Type.Object({
        id: Id,
        ref: Optional(Type.String()),
        component: Type.Union([Id, Type.Null()]),
        placeholder: Type.String(),
        typeId: Optional(Id),
        isContainer: Type.Boolean(),
        parent: Type.Union([Id, Type.Null()]),
        position: Position,
        width: Size,
        height: Size,
      }),
    ),
    textareas: Type.Array(
      Type.Object({
        id: Id,
        ref: Optional(Type.String()),
        position: Position,
        width: Size,
        text: Type.String(),
      }),
    ),
    relations: Type.Array(
      Type.Object({
        id: Id,
        ref: Optional(Type.String()),
        fromComponentInstance: Id,
        toComponentInstance: Id,
        label: Text,
        desc: Text,
        linksTo: Type.Array(Id),
      }),
    ),
    apiContext: Optional(Type.String()),
  }),
} satisfies Record<StoredKind, TSchema>;

export type StoredFile<K extends StoredKind> = Static<(typeof FILE_SCHEMAS)[K]>;

export function checkFile<S extends TSchema>(path: string, schema: S, value: unknown): Static<S> {
  try {
    return checkBody(schema, value);
  } catch (err) {
    if (err instanceof SchemaError) throw new FileError(path, err.message.replace(/^Invalid JSON: /, ''));
    throw err;
  }
}

export function checkStoredFile<K extends StoredKind>(path: string, kind: K, value: unknown): StoredFile<K> {
  return checkFile(path, FILE_SCHEMAS[kind], value) as StoredFile<K>;
}
