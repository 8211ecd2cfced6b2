import Type from 'typebox';

/** `POST /api/external/drafts`: open a draft of `main` at `from` (default its tip). */
export const DraftBody = Type.Object({
  name: Type.String(),
  title: Type.Optional(Type.String()),
  desc: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  from: Type.Optional(Type.String()),
});

export const Resolution = Type.Object({
  kind: Type.Union(['type', 'tag', 'attribute', 'component', 'diagram', 'organization'].map((kind) => Type.Literal(kind))),
  id: Type.String(),
  field: Type.String(),
  take: Type.Union([Type.Literal('main'), Type.Literal('draft')]),
});

/** `POST …/merge` and `POST …/update`: how to settle the conflicts a merge reports (none needed when it has none). */
export const MergeBody = Type.Object({
  resolutions: Type.Optional(Type.Array(Resolution)),
});
