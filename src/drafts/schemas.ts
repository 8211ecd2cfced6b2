import Type from 'typebox';
import { wordedByWrite } from '../model/check-body.js';
import { DRAFT_NAME, DRAFT_NAME_EXCLUDED, DRAFT_NAME_MAX_LENGTH, RESERVED_DRAFT_NAMES } from '../store/branches.js';

/** The rule of every draft name in words, as the schemas below state it. */
const RULE =
  `1 to ${DRAFT_NAME_MAX_LENGTH} characters of a-z, 0-9, \`.\`, \`_\` and \`-\`, starting with a letter or ` +
  'digit, without `..` and not ending in `.` or `.lock`';

/**
 * A draft name as JSON Schema, from the constants isDraftName checks it by, so that the document,
 * and a client generated from it, knows the rule; `reserved`: names refused besides (a new draft's).
 */
function draftNameSchema(description: string, reserved: readonly string[] = []) {
  return Type.String({
    pattern: DRAFT_NAME.source,
    maxLength: DRAFT_NAME_MAX_LENGTH,
    not: {
      anyOf: [...DRAFT_NAME_EXCLUDED.map((excluded) => ({ pattern: excluded.source })), ...reserved.map((name) => ({ const: name }))],
    },
    description,
  } as never);
}

/**
 * A new draft's name (Drafts.open checks it by isDraftName and reservedDraftName); the refusal is
 * worded by Drafts.open (`Invalid draft name '<name>': …`).
 */
const DraftName = wordedByWrite(
  draftNameSchema(
    `The draft's name, its branch \`drafts/<name>\`: ${RULE}; not \`main\`. A name some draft has (open, merged or closed) is 409.`,
    RESERVED_DRAFT_NAMES,
  ),
);

/**
 * The name of a draft a request reads or writes (`?draft=`, `/drafts/{name}`), as locateDraft
 * checks it (isDraftName), whose refusal is 400 `Invalid draft name '<name>': …`. A name of the
 * rule that no draft has is 404 (`main` among them: no draft is opened under it).
 */
export const DraftNameParameter = draftNameSchema(`A draft's name: ${RULE} (else 400); one no draft has is 404.`);

/** `POST /api/external/drafts`: open a draft of `main` at `from` (default its tip). */
export const DraftBody = Type.Object({
  name: DraftName,
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
