import { ApiError } from '../errors.js';
import { GitCommandError, runGit } from '../store/git-cli.js';
import { isoOfGitTime } from '../store/git-format.js';
import { VERSION_NAME } from '../store/refs.js';

/** A named version: an annotated git tag on a commit of `main`, as `git tag -a` makes it. */
export interface Version {
  name: string;
  commit: string;
  desc: string | null;
  tagger: { name: string; email: string } | null;
  time: string | null;
}

/** A name git would read as a commit id: hex digits of either case, as git and revisions (commit-names.ts) read them. */
export const COMMIT_LIKE = /^[0-9a-fA-F]{4,40}$/;
/** What VERSION_NAME lets through and versionNameProblem does not: `..` and `//` anywhere, a trailing `.lock`. */
export const VERSION_NAME_EXCLUDED: readonly RegExp[] = [/\.\./, /\/\//, /\.lock$/];
/**
 * What git (`check-ref-format`, which checkVersionName asks) refuses of the names versionNameProblem
 * lets through: a part between slashes starting with `.` or ending in `.lock`, a trailing `/` or `.`.
 * Stated for the OpenAPI document; test/openapi-agreement.test.ts holds it to git's own verdicts.
 */
export const VERSION_NAME_GIT_REFUSES: readonly RegExp[] = [/\/\./, /\.lock\//, /\/$/, /\.$/];

export async function createVersion(
  gitdir: string,
  version: { name: string; desc: string | null; commit: string; tagger: { name: string; email: string } },
): Promise<Version> {
  await checkVersionName(gitdir, version.name);
  const versionNames = async () => (await listVersions(gitdir)).map((v) => v.name);
  throwIfTaken(version.name, await versionNames());
  try {
    await runGit(gitdir, ['tag', '-a', '-F', '-', '--end-of-options', version.name, version.commit], {
      input: version.desc ?? version.name,
      env: {
        GIT_COMMITTER_NAME: version.tagger.name,
        GIT_COMMITTER_EMAIL: version.tagger.email,
      },
    });
  } catch (err) {
    // Made by another request since the list above: git refuses it, the answer is the same.
    if (err instanceof GitCommandError && /already exists|cannot lock ref/.test(err.stderr)) {
      throwIfTaken(version.name, await versionNames());
    }
    throw err;
  }
  const created = (await listVersions(gitdir)).find((v) => v.name === version.name);
  if (!created) throw new Error(`tag ${version.name} vanished after it was made`);
  return created;
}

/**
 * A version's name is a path under refs/tags/: `v1` and `v1/rc` cannot both be versions (git keeps
 * a ref and a folder of refs of one name apart), so the second is refused as taken, naming the first.
 */
function throwIfTaken(name: string, existing: readonly string[]): void {
  const clash = versionClash(name, existing);
  if (clash !== null) throw new ApiError(409, clash);
}

/**
 * Why a version `name` cannot be made beside the versions `existing` (the API's rule and a push's),
 * or null. Names are compared without case as well: a clone on macOS or Windows keeps `v1` and
 * `V1` (or `V1/rc`) as one file, and its fetch of both fails.
 */
export function versionClash(name: string, existing: readonly string[]): string | null {
  return new VersionNames(existing).clash(name);
}

/**
 * versionClash for many names at once: the versions `names` indexed once, so that each name is
 * asked about in the time of its own length, not of the number of versions (a push of thousands
 * of tags asked versionClash of each beside all the others: quadratic). Answers as versionClash
 * does, word for word, naming the same other version: the first of `names`, in their order, that
 * the rule finds.
 */
export class VersionNames {
  /** Each name → the first two places it has (two: one may be the name asked about itself). */
  private readonly exact = new Map<string, number[]>();
  /** Each name in lower case → the first two places of names that are it in lower case. */
  private readonly folded = new Map<string, number[]>();
  /** Each folder (in lower case, without its `/`) of a name → the first place of a name in it, at any depth. */
  private readonly folders = new Map<string, number>();

  constructor(private readonly names: readonly string[]) {
    names.forEach((name, place) => {
      firstTwo(this.exact, name, place);
      const folded = name.toLowerCase();
      firstTwo(this.folded, folded, place);
      for (let slash = folded.indexOf('/'); slash >= 0; slash = folded.indexOf('/', slash + 1)) {
        const folder = folded.slice(0, slash);
        if (!this.folders.has(folder)) this.folders.set(folder, place);
      }
    });
  }

  /**
   * versionClash(name, the names but the one at place `self`): for a name of a push asked about
   * beside every other of the push and the versions there are.
   */
  clash(name: string, self?: number): string | null {
    const other = (places: readonly number[] | undefined) => places?.find((place) => place !== self);
    if (other(this.exact.get(name)) !== undefined) return `Version '${name}' already exists.`;
    const folded = name.toLowerCase();
    // Not the name itself (it would have been found above): one differing only in case.
    const sameButCase = other(this.folded.get(folded));
    if (sameButCase !== undefined) {
      return `Version '${name}' cannot be made beside version '${this.names[sameButCase]}': names that differ only in case are one file on macOS and Windows clones.`;
    }
    // The first name in a folder `name` is, or that is a folder of `name` (neither is `name` itself).
    let clash = this.folders.get(folded);
    for (let slash = folded.indexOf('/'); slash >= 0; slash = folded.indexOf('/', slash + 1)) {
      const folder = this.folded.get(folded.slice(0, slash))?.[0];
      if (folder !== undefined && (clash === undefined || folder < clash)) clash = folder;
    }
    if (clash === undefined) return null;
    return `Version '${name}' cannot be made beside version '${this.names[clash]}': one version's name cannot be a folder of another's.`;
  }
}

function firstTwo(map: Map<string, number[]>, key: string, place: number): void {
  const places = map.get(key);
  if (places === undefined) map.set(key, [place]);
  else if (places.length < 2) places.push(place);
}

/** versionNameProblem's rule, then git's own (`git check-ref-format`). */
async function checkVersionName(gitdir: string, name: string): Promise<void> {
  const problem = versionNameProblem(name);
  if (problem !== null) throw new ApiError(400, problem);
  const { code } = await runGit(gitdir, ['check-ref-format', `refs/tags/${name}`], { okCodes: [1] });
  if (code !== 0) throw new ApiError(400, `Invalid version name '${name}': git does not accept it as a tag name.`);
}

const FIELDS = [
  'refname:strip=2',
  'objecttype',
  'objectname',
  '*objectname',
  '*objecttype',
  'contents',
  'taggername',
  'taggeremail',
  // Raw: git's iso-strict fails the whole listing on a time before the epoch in its zone.
  'creatordate:raw',
];

/** Every version, newest first. */
export async function listVersions(gitdir: string): Promise<Version[]> {
  const format = `${FIELDS.map((field) => `%(${field})`).join('%1f')}%1e`;
  // Sorted here, not by git: its sort by creatordate fails as its iso-strict does.
  const { stdout } = await runGit(gitdir, ['for-each-ref', `--format=${format}`, 'refs/tags']);
  const versions: Array<Version & { seconds: number }> = [];
  for (const record of stdout.toString('utf8').split('\x1e')) {
    const fields = record.replace(/^\n/, '').split('\x1f');
    if (fields.length < FIELDS.length) continue;
    const [name, type, object, peeled, peeledType, contents, taggerName, taggerEmail, time] = fields;
    const annotated = type === 'tag';
    versions.push({
      name,
      // git peels one tag only: a tag of a tag (which a push may bring) names its commit further down.
      commit: !annotated ? object : peeledType === 'tag' ? ((await commitUnder(gitdir, name)) ?? peeled) : peeled,
      desc: annotated ? contents.trim() || null : null,
      tagger: annotated ? { name: taggerName, email: taggerEmail.replace(/^<|>$/g, '') } : null,
      time: time ? isoOfGitTime(...(time.split(' ') as [string, string])) : null,
      seconds: time ? Number(time.split(' ')[0]) : 0,
    });
  }
  // Newest first; of one time, by name (as git's --sort=-creatordate).
  versions.sort((a, b) => b.seconds - a.seconds || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return versions.map(({ seconds: _, ...version }) => version);
}

/** The commit a tag of tags names in the end; undefined when it names none. */
async function commitUnder(gitdir: string, name: string): Promise<string | undefined> {
  const { code, stdout } = await runGit(gitdir, ['rev-parse', '--verify', '--quiet', '--end-of-options', `refs/tags/${name}^{commit}`], {
    okCodes: [1, 128],
  });
  return code === 0 ? stdout.toString('utf8').trim() : undefined;
}

/**
 * Why `name` cannot be a version's name, or null: the one rule for versions made through the API
 * and pushed as tags. A name that git would read as something else (`main`, `HEAD`, a commit id)
 * would make clones and revisions ambiguous.
 */
export function versionNameProblem(name: string): string | null {
  if (name.startsWith('-') || COMMIT_LIKE.test(name) || RESERVED_NAMES.has(name) || GIT_STATE_NAME.test(name)) {
    return `Invalid version name '${name}': it must not start with '-', look like a commit id or be one of ${[...RESERVED_NAMES].join(', ')} and git's other *_HEAD names.`;
  }
  if (GIT_NAMESPACE.test(name)) {
    return `Invalid version name '${name}': git reads a name starting with refs/, tags/, heads/ or remotes/ as a ref of its own before a tag.`;
  }
  if (CLONE_BRANCH.test(name)) {
    return `Invalid version name '${name}': a clone reads origin, origin/… and drafts/… as its branches (the server's main, a draft's branch) before a tag.`;
  }
  // VERSION_NAME is also the rule revisions are read by (`?at=`, diff, history, revert): every version can be named.
  if (!VERSION_NAME.test(name) || VERSION_NAME_EXCLUDED.some((excluded) => excluded.test(name))) {
    return `Invalid version name '${name}': use 1 to 200 ASCII letters, digits, '.', '-', '_' and '/', starting with a letter or digit (no '..', no '.lock' at the end).`;
  }
  return null;
}

/**
 * The starts git resolves before `refs/tags/<name>` (`git rev-parse tags/v1` is the tag v1,
 * `heads/main` the branch, `remotes/origin/main` a clone's remote branch): such a version would be
 * another ref on a clone. A pipeline handing on its CI's ref (`refs/tags/v2.0`) would make one.
 */
export const GIT_NAMESPACE = /^(refs|tags|heads|remotes)\//;
/**
 * The names a clone has as branches, which git resolves after `refs/tags/<name>`: a version
 * `origin/main` stood in for every clone's `origin/main` (`git rebase origin/main`, `git reset
 * --hard origin/main` went to the tag's commit; git only warns that the name is ambiguous),
 * `origin` for `origin/HEAD`, and `drafts/x` for the draft's branch a clone checked out. In any
 * case: on macOS and Windows a loose ref `refs/tags/Origin/main` is the file git opens for
 * `refs/tags/origin/main`. Spelled without a flag: the OpenAPI document's pattern is this source.
 */
export const CLONE_BRANCH = /^([Oo][Rr][Ii][Gg][Ii][Nn](\/|$)|[Dd][Rr][Aa][Ff][Tt][Ss]\/)/;
export const RESERVED_NAMES: ReadonlySet<string> = new Set(['main', 'HEAD', 'FETCH_HEAD', 'ORIG_HEAD', 'MERGE_HEAD', 'AUTO_MERGE']);
/** The names git gives its own state (CHERRY_PICK_HEAD, REVERT_HEAD, BISECT_HEAD, …): a revision of that name is git's, not the tag. */
export const GIT_STATE_NAME = /^[A-Z_]+_HEAD$/;
