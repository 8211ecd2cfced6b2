import { ApiError } from '../errors.js';
import { GitCommandError, runGit } from '../store/git-cli.js';
import { VERSION_NAME } from '../store/refs.js';

/** A named version: an annotated git tag on a commit of `main`, as `git tag -a` makes it. */
export interface Version {
  name: string;
  commit: string;
  desc: string | null;
  tagger: { name: string; email: string } | null;
  time: string | null;
}

const COMMIT_LIKE = /^[0-9a-f]{4,40}$/;

export async function createVersion(
  gitdir: string,
  version: { name: string; desc: string | null; commit: string; tagger: { name: string; email: string } },
): Promise<Version> {
  await checkVersionName(gitdir, version.name);
  try {
    await runGit(gitdir, ['tag', '-a', '-F', '-', '--end-of-options', version.name, version.commit], {
      input: version.desc ?? version.name,
      env: {
        GIT_COMMITTER_NAME: version.tagger.name,
        GIT_COMMITTER_EMAIL: version.tagger.email,
      },
    });
  } catch (err) {
    if (err instanceof GitCommandError && /already exists/.test(err.stderr)) {
      throw new ApiError(409, `Version '${version.name}' already exists.`);
    }
    throw err;
  }
  const created = (await listVersions(gitdir)).find((v) => v.name === version.name);
  if (!created) throw new Error(`tag ${version.name} vanished after it was made`);
  return created;
}

/**
 * The names a revision can name (VERSION_NAME, the rule `?at=`, diff, history and revert read
 * by), within git's own ref-name rules (`git check-ref-format`), and not mistakable for a
 * commit id or `main`.
 */
async function checkVersionName(gitdir: string, name: string): Promise<void> {
  const rules =
    "Use 1 to 200 ASCII letters, digits, '.', '-', '_' and '/', starting with a letter or digit, as git allows in tag names (no '..', no '.lock' at the end).";
  if (COMMIT_LIKE.test(name) || name === 'main') {
    throw new ApiError(400, `Invalid version name '${name}': it must not look like a commit id or be 'main'. ${rules}`);
  }
  if (!VERSION_NAME.test(name)) throw new ApiError(400, `Invalid version name '${name}'. ${rules}`);
  const { code } = await runGit(gitdir, ['check-ref-format', `refs/tags/${name}`], { okCodes: [1] });
  if (code !== 0) throw new ApiError(400, `Invalid version name '${name}'. ${rules}`);
}

const FIELDS = [
  'refname:strip=2',
  'objecttype',
  'objectname',
  '*objectname',
  'contents',
  'taggername',
  'taggeremail',
  'creatordate:iso-strict',
];

/** Every version, newest first. */
export async function listVersions(gitdir: string): Promise<Version[]> {
  const format = `${FIELDS.map((field) => `%(${field})`).join('%1f')}%1e`;
  const { stdout } = await runGit(gitdir, ['for-each-ref', '--sort=-creatordate', `--format=${format}`, 'refs/tags']);
  const versions: Version[] = [];
  for (const record of stdout.toString('utf8').split('\x1e')) {
    const fields = record.replace(/^\n/, '').split('\x1f');
    if (fields.length < FIELDS.length) continue;
    const [name, type, object, peeled, contents, taggerName, taggerEmail, time] = fields;
    const annotated = type === 'tag';
    versions.push({
      name,
      commit: annotated ? peeled : object,
      desc: annotated ? contents.trim() || null : null,
      tagger: annotated ? { name: taggerName, email: taggerEmail.replace(/^<|>$/g, '') } : null,
      time: time || null,
    });
  }
  return versions;
}
