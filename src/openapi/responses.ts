import Type from 'typebox';
import { FILE_SCHEMAS } from '../model/file-schemas.js';
import { DIRECTORIES, type StoredKind } from '../model/paths.js';

/**
 * Response bodies, from the stored files' schemas (src/model/file-schemas.ts): the API answers
 * resources as stored (src/model/present.ts), except that components also carry `typeSlug` and
 * diagrams their `url` and full tag objects.
 */

export const ErrorResponse = Type.Object(
  { error: Type.String() },
  { description: 'Every failure: one string field, in the words of CONTRACT.md §3.' },
);

export const TypeResponse = FILE_SCHEMAS.type;
export const TagResponse = FILE_SCHEMAS.tag;
export const AttributeResponse = FILE_SCHEMAS.attribute;

export const ComponentResponse = Type.Object({
  ...FILE_SCHEMAS.component.properties,
  typeSlug: Type.Union([Type.String(), Type.Null()]),
});

export const DiagramResponse = Type.Object({
  ...FILE_SCHEMAS.diagram.properties,
  url: Type.String({ description: '`<public url>/orgs/<slug>/diagrams/<id>`: the diagram viewer' }),
  tags: Type.Array(TagResponse),
});

export const ModelResponse = Type.Object({
  types: Type.Array(TypeResponse),
  tags: Type.Array(TagResponse),
  attributes: Type.Array(AttributeResponse),
  components: Type.Array(ComponentResponse),
  diagrams: Type.Array(DiagramResponse),
});

export const ModelWriteResponse = Type.Object({
  components: Type.Array(ComponentResponse),
  diagrams: Type.Array(DiagramResponse),
});

export const HealthResponse = Type.Object({ ok: Type.Boolean() });

/*
 * The current form's shapes (src/model/current-form/present.ts): tags and attributes as above;
 * components and diagrams in the current spellings.
 */

const Text = Type.Union([Type.String(), Type.Null()]);
const NullableId = Type.Union([Type.String(), Type.Null()]);
const Position = Type.Object({ x: Type.Integer(), y: Type.Integer() });
const Size = Type.Integer({ minimum: 1, maximum: 100 });
const { state: State, level: Level, ref: Ref, apiContext: ApiContext } = FILE_SCHEMAS.diagram.properties;
const AttributeValues = FILE_SCHEMAS.component.properties.attributes;

export const CurrentComponentResponse = Type.Object({
  id: Type.String(),
  ref: Ref,
  name: Type.String(),
  desc: Text,
  inlineDesc: Type.Boolean(),
  state: State,
  typeId: NullableId,
  typeSlug: NullableId,
  tags: Type.Array(Type.String(), { description: 'Tag ids.' }),
  linksTo: Type.Array(Type.String(), { description: 'Diagram ids.' }),
  attributes: AttributeValues,
  apiContext: ApiContext,
});

export const CurrentDiagramResponse = Type.Object({
  id: Type.String(),
  ref: Ref,
  name: Type.String(),
  desc: Text,
  state: State,
  level: Level,
  url: Type.String({ description: '`<public url>/orgs/<slug>/diagrams/<id>`: the diagram viewer' }),
  tags: Type.Array(Type.String(), { description: 'Tag ids.' }),
  componentInstances: Type.Array(
    Type.Object({
      id: Type.String(),
      ref: Ref,
      componentId: NullableId,
      placeholder: Type.Union([Type.Object({ text: Type.String(), typeId: NullableId }), Type.Null()], {
        description: '`null` unless the instance has no component.',
      }),
      isContainer: Type.Boolean(),
      parentId: NullableId,
      position: Position,
      width: Size,
      height: Size,
    }),
  ),
  textareas: Type.Array(Type.Object({ id: Type.String(), ref: Ref, position: Position, width: Size, text: Type.String() })),
  relations: Type.Array(
    Type.Object({
      id: Type.String(),
      ref: Ref,
      fromRef: Type.String({ description: 'The instance’s ref where it has one, else its id.' }),
      toRef: Type.String({ description: 'The instance’s ref where it has one, else its id.' }),
      label: Text,
      desc: Text,
      linksTo: Type.Array(Type.String()),
    }),
  ),
  apiContext: ApiContext,
});

export const TemplateResponse = Type.Object({
  components: Type.Array(CurrentComponentResponse),
  diagrams: Type.Array(CurrentDiagramResponse),
});

/* Search (src/search/search.ts). */

const Named = Type.Object({ id: Type.String(), name: Type.String() });

export const ComponentSearchResult = Type.Object({
  id: Type.String(),
  name: Type.String(),
  state: State,
  desc: Text,
  type: Type.Union([Named, Type.Null()]),
  tags: Type.Array(Type.String()),
  attributes: AttributeValues,
});

export const DiagramSearchResult = Type.Object({
  id: Type.String(),
  name: Type.String(),
  url: Type.String(),
  state: State,
  level: Level,
  tags: Type.Array(Type.String()),
});

export const DependencySearchResult = Type.Object({
  component: Named,
  direction: Type.Enum(['upstream', 'downstream']),
  diagrams: Type.Array(Named, { description: 'The diagrams that draw the relation; empty for a component link.' }),
});

/* History, diffs, versions, revert (src/history/). */

const Kind = Type.Enum(Object.keys(DIRECTORIES) as StoredKind[]);
const Person = Type.Object({ name: Type.String(), email: Type.String() });
const Commit = Type.String({ description: 'A full commit id.' });

const ResourceRef = Type.Object({ kind: Kind, id: Type.String(), name: Text });

const FieldChanges = Type.Array(
  Type.Object({
    field: Type.String({ description: 'Dotted path; items of nested arrays are named by id (`componentInstances.<id>.position`).' }),
    old: Type.Unknown(),
    new: Type.Unknown(),
  }),
);

export const ModelDiffResponse = Type.Object({
  added: Type.Array(ResourceRef),
  removed: Type.Array(ResourceRef),
  changed: Type.Array(Type.Object({ ...ResourceRef.properties, fields: FieldChanges })),
  organization: Type.Optional(
    Type.Object(
      {
        name: Type.String({ description: "The organization's name after." }),
        fields: FieldChanges,
      },
      {
        description:
          'Present when the organization itself changed (organization.yaml, which is no resource: by a push, an upgrade, a merge or revert bringing one): its changed fields, `name`, `slug` or `members` (old and new as whole lists).',
      },
    ),
  ),
});

export const HistoryEntryResponse = Type.Object({
  id: Commit,
  parents: Type.Array(Commit),
  author: Person,
  time: Type.String({ description: 'ISO 8601.' }),
  summary: Type.String(),
  apiContext: Text,
  resources: Type.Array(
    Type.Object({
      kind: Type.Union([Kind, Type.Literal('organization')]),
      id: Type.String(),
      name: Text,
      action: Type.Enum(['create', 'update', 'delete', 'move']),
      path: Type.String(),
    }),
  ),
});

export const HistoryCommitResponse = Type.Object({ ...HistoryEntryResponse.properties, diff: ModelDiffResponse });

export const DiffResponse = Type.Object({ from: Commit, to: Commit, ...ModelDiffResponse.properties });

export const VersionResponse = Type.Object({
  name: Type.String(),
  commit: Commit,
  desc: Text,
  tagger: Type.Union([Person, Type.Null()], { description: '`null` for a lightweight tag.' }),
  time: Type.Union([Type.String(), Type.Null()]),
});

export const RevertResponse = Type.Object({
  commit: Type.String({ description: 'The new commit, or `main` unchanged when nothing differed.' }),
  restored: Commit,
  changes: ModelDiffResponse,
});

const DraftState = Type.Union([Type.Literal('open'), Type.Literal('merged'), Type.Literal('closed')]);

export const DraftResponse = Type.Object({
  name: Type.String(),
  title: Type.String(),
  desc: Text,
  state: DraftState,
  base: Type.String({ description: 'The merge base with `main`; for a merged draft, the one it had when it was merged.' }),
  head: Type.String({ description: "The tip of the draft's branch `drafts/<name>`." }),
  author: Type.String(),
  created: Type.String(),
  mergedAt: Type.Optional(Type.String()),
  mergeCommit: Type.Optional(Type.String()),
  closedAt: Type.Optional(Type.String()),
});

export const MergeConflictResponse = Type.Object({
  kind: Type.String(),
  id: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  field: Type.String({ description: 'Dotted path (`componentInstances.<id>.position`); `*`: deleted on one side, changed on the other.' }),
  base: Type.Unknown({ description: 'As the API’s GETs answer it (a whole resource with `typeSlug`, `url`, tag objects); `null`: none.' }),
  main: Type.Unknown({ description: 'As `base`, on main.' }),
  draft: Type.Unknown({ description: 'As `base`, in the draft.' }),
});

/**
 * The 409 of a draft's merge or update (src/http/routes/drafts.ts): the error object, with the
 * fields to settle beside it when the two sides changed one field differently (CONTRACT §8).
 */
export const MergeConflictError = Type.Object(
  {
    error: Type.String(),
    conflicts: Type.Optional(
      Type.Array(MergeConflictResponse, {
        description:
          'When the two sides changed one field differently: each such field (send a `resolutions` entry for each). Absent on the other 409s (a merged or closed draft, a result that breaks a rule).',
      }),
    ),
  },
  { description: 'The error object; a merge that conflicts also names the conflicts.' },
);

export const DraftDetailsResponse = Type.Object({
  ...DraftResponse.properties,
  changes: DiffResponse,
  behind: Type.Integer({ description: 'Commits of `main` since `base` (a merged draft: until its merge).' }),
  conflicts: Type.Array(MergeConflictResponse),
  problem: Type.Optional(
    Type.String({ description: 'Why a merge now would be refused: the rule it would break (409) or the bound it would pass (413).' }),
  ),
});

export const DraftMergeResponse = Type.Object({
  ...DraftResponse.properties,
  commit: Type.String({ description: 'The merge commit (or the unchanged tip when there was nothing to take in).' }),
  committed: Type.Boolean(),
  mergedHead: Type.Optional(
    Type.String({
      description:
        "A merge into main: the draft's head it took in (the merge commit's second parent). The draft's `head`, unless a push moved the draft on while it merged: then the draft stays `open` at the pushed head, and a next merge brings the rest.",
    }),
  ),
});
