import Type from 'typebox';
import { wordedByWrite } from '../model/check-body.js';
import { VERSION_NAME } from '../store/refs.js';
import {
  CLONE_BRANCH,
  COMMIT_LIKE,
  GIT_NAMESPACE,
  GIT_STATE_NAME,
  RESERVED_NAMES,
  VERSION_NAME_EXCLUDED,
  VERSION_NAME_GIT_REFUSES,
} from './versions.js';

/**
 * A version's name as JSON Schema, from the constants createVersion checks it by (and git's rules
 * it asks git about), so that the document, and a client generated from it, knows the rule; the
 * refusal is worded by createVersion (`Invalid version name '<name>': …`).
 */
const VersionName = wordedByWrite(
  Type.String({
    pattern: VERSION_NAME.source,
    not: {
      anyOf: [
        ...[COMMIT_LIKE, GIT_STATE_NAME, GIT_NAMESPACE, CLONE_BRANCH, ...VERSION_NAME_EXCLUDED, ...VERSION_NAME_GIT_REFUSES].map(
          (excluded) => ({
            pattern: excluded.source,
          }),
        ),
        ...[...RESERVED_NAMES].map((reserved) => ({ const: reserved })),
      ],
    },
    description:
      "The version's name, its tag: 1 to 200 characters of A-Z, a-z, 0-9, `.`, `_`, `-` and `/`, starting with a letter or digit; " +
      'without `..` or `//`, no part between slashes starting with `.` or ending in `.lock`, not ending in `/` or `.`; not 4 to 40 ' +
      'hex digits of either case (a commit id), not starting with `refs/`, `tags/`, `heads/` or `remotes/` (git reads those as its own refs), ' +
      'not `origin`, nor starting with `origin/` or `drafts/`, in any case (a clone reads those as its branches); ' +
      `nor ${[...RESERVED_NAMES].map((name) => `\`${name}\``).join(', ')} or another \`*_HEAD\` of capitals ` +
      "and `_` (git's own names). A name taken, or one a version's name is a folder of (`v1` beside `v1/rc`), is 409.",
  } as never),
);

/** `POST /api/external/version`: name the current `main`. */
export const VersionBody = Type.Object({
  name: VersionName,
  desc: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

/** `POST /api/external/revert`: restore the model as it was at `commit` (an id, abbreviation or version). */
export const RevertBody = Type.Object({
  commit: Type.String(),
});
