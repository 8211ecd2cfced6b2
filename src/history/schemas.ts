import Type from 'typebox';

/** `POST /api/external/version`: name the current `main`. */
export const VersionBody = Type.Object({
  name: Type.String(),
  desc: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

/** `POST /api/external/revert`: restore the model as it was at `commit` (an id, abbreviation or version). */
export const RevertBody = Type.Object({
  commit: Type.String(),
});
