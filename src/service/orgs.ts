import type { Limits } from '../limits/limits.js';
import type { LayoutRunner } from '../model/draft.js';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import {
  collectionOf,
  DIRECTORIES,
  FileError,
  emptyModel,
  ORGANIZATION_FILE,
  resourcePath,
  serialize,
  serializeOrganization,
  type StoredKind,
} from '../model/files.js';
import { SCHEMA_FILES } from '../editor/schemas.js';
import { newId } from '../model/ids.js';
import { loadModel } from '../model/load.js';
import { checkNewNames, memberCalled } from '../model/rules.js';
import type { Model } from '../model/types.js';
import { guardPushes } from '../push/hook.js';
import type { KeyStore } from '../store/keys.js';
import { newOrgIdentity, orgGitdir, readOrgIdentity, SLUG_PATTERN } from '../store/org-identity.js';
import { Repo, type Author, type FileChange } from '../store/repo.js';
import { modelFilesOf, readFolderFile } from '../check/directory.js';
import { removeStaleModelCacheFiles } from './model-cache.js';
import { OrgModel, type OrgSettings, type Snapshot } from './org.js';
import { SnapshotCache } from './snapshot-cache.js';

export { SLUG_PATTERN } from '../store/org-identity.js';

/** The C4 set every new organization starts with. */
export const DEFAULT_TYPES: ReadonlyArray<[slug: string, name: string]> = [
  ['person', 'Person'],
  ['software-system', 'Software System'],
  ['container', 'Container'],
  ['component', 'Component'],
  ['database', 'Database'],
  ['queue', 'Queue'],
];

export interface CreateOrgOptions {
  name?: string;
  members?: string[];
  /** A folder laid out like a model repository (e.g. sample-repo/) to start from. */
  from?: string;
  author: Author;
  /**
   * Runs with the new organization's identity before the organization appears under its slug
   * (its first key is written here): a create stopped before this leaves no organization.
   */
  beforeAppearing?: (identity: string) => Promise<void>;
}

/** The organizations of one data directory: `orgs/<slug>.git`, opened once and kept. */
export class Orgs {
  private readonly open = new Map<string, OrgModel>();
  /** `?at=` snapshots of every organization, within one budget of bytes. */
  readonly snapshots: SnapshotCache<Snapshot>;

  constructor(
    readonly dataDir: string,
    private readonly options: {
      durable?: boolean;
      maxWaitingWrites?: number;
      snapshotCacheBytes?: number;
      limits?: Limits;
      runLayout?: LayoutRunner;
      writeTimeout?: number;
      /** Told of every commit the service makes (background packing, mirroring). */
      afterCommit?: (slug: string, gitdir: string, commit: string) => void;
      /** Told the lock wait and commit time of every write (metrics). */
      observeWrite?: OrgSettings['observeWrite'];
      testPauses?: OrgSettings['testPauses'];
    } = {},
  ) {
    this.snapshots = new SnapshotCache(options.snapshotCacheBytes);
  }

  gitdir(slug: string): string {
    const gitdir = orgGitdir(this.dataDir, slug);
    if (gitdir === undefined) throw new Error(`Invalid organization slug ${JSON.stringify(slug)}`);
    return gitdir;
  }

  exists(slug: string): boolean {
    return SLUG_PATTERN.test(slug) && existsSync(this.gitdir(slug));
  }

  async list(): Promise<string[]> {
    const names = await readdir(join(this.dataDir, 'orgs')).catch(() => [] as string[]);
    return names
      .filter((n) => n.endsWith('.git'))
      .map((n) => n.slice(0, -4))
      .filter((s) => SLUG_PATTERN.test(s))
      .sort();
  }

  /**
   * The organization now under this slug. One removed and created again while the server runs
   * has a new identity: it gets a fresh OrgModel, so nothing cached from the old one (snapshots
   * of `?at=`, verdicts on invalid commits) is served for it.
   */
  get(slug: string): OrgModel {
    if (!this.exists(slug)) {
      this.forget(slug);
      throw new Error(`Organization '${slug}' does not exist.`);
    }
    return this.opened(slug);
  }

  /** The model of an organization just seen to exist: the one open, unless its repository was replaced. */
  private opened(slug: string): OrgModel {
    const identity = readOrgIdentity(this.gitdir(slug));
    let org = this.open.get(slug);
    if (!org || org.identity !== identity) {
      this.forget(slug);
      const gitdir = this.gitdir(slug);
      const afterCommit = this.options.afterCommit;
      org = new OrgModel(slug, new Repo(gitdir, this.options), this.options.maxWaitingWrites, identity, this.snapshots, {
        limits: this.options.limits,
        runLayout: this.options.runLayout,
        writeTimeout: this.options.writeTimeout,
        afterCommit: afterCommit && ((commit) => afterCommit(slug, gitdir, commit)),
        observeWrite: this.options.observeWrite,
        testPauses: this.options.testPauses,
      });
      this.open.set(slug, org);
    }
    return org;
  }

  /** Organizations whose model is in memory. */
  get loadedCount(): number {
    let count = 0;
    for (const org of this.open.values()) if (org.loaded) count++;
    return count;
  }

  /** The organization under this slug, or undefined when there is none (any left-over state is dropped). */
  find(slug: string): OrgModel | undefined {
    // Every request with a key asks: one look at the file system, not two.
    if (this.exists(slug)) return this.opened(slug);
    this.forget(slug);
    return undefined;
  }

  /** Drops what is kept of an organization removed (or replaced) behind the server's back. */
  private forget(slug: string): void {
    const org = this.open.get(slug);
    if (org === undefined) return;
    this.snapshots.dropOwner(org.owner);
    this.open.delete(slug);
  }

  /**
   * Run once when a server starts, before it answers: gives every repository made before
   * organizations had identities one (in its git config) and the same one to the keys of its
   * slug that have none, and removes blob- and model-cache files a killed process left half-written
   * and repositories a killed `org create` left half made.
   */
  async prepare(keys: KeyStore): Promise<void> {
    await Repo.removeAbandonedStagings(join(this.dataDir, 'orgs'));
    for (const slug of await this.list()) {
      const repo = new Repo(this.gitdir(slug), this.options);
      try {
        const identity = readOrgIdentity(repo.gitdir) ?? (await repo.adoptIdentity());
        await keys.adopt(slug, identity);
        await repo.removeStaleBlobCacheFiles();
        await removeStaleModelCacheFiles(repo.gitdir);
      } catch (error) {
        // One damaged repository must not keep the server from serving the others; without an
        // identity its keys are refused (fail closed) until a later start adopts one.
        console.error(`c4store: organization '${slug}': ${(error as Error).message}`);
      }
    }
  }

  async create(slug: string, options: CreateOrgOptions): Promise<OrgModel> {
    if (!SLUG_PATTERN.test(slug)) {
      throw new Error(`Invalid organization slug '${slug}': use lowercase letters, digits and '-', at most 63 characters.`);
    }
    if (this.exists(slug)) throw new Error(`Organization '${slug}' already exists.`);
    const model = options.from ? await loadFolder(options.from) : emptyModel({ name: slug, slug, members: [] });
    model.organization = {
      name: options.name ?? (options.from ? model.organization.name : slug),
      slug,
      members: joinMembers(model.organization.members, options.members ?? []),
    };
    if (model.types.size === 0) {
      model.types = new Map(
        DEFAULT_TYPES.map(([typeSlug, name]) => {
          const id = newId();
          return [id, { id, slug: typeSlug, name }];
        }),
      );
    }
    const identity = newOrgIdentity();
    // What an earlier create, killed, left beside the organizations goes before this one adds its own.
    await Repo.removeAbandonedStagings(dirname(this.gitdir(slug)));
    await Repo.init(
      this.gitdir(slug),
      {
        identity,
        files: modelFiles(model),
        author: options.author,
        // The folder's name, not its path: the path is the creating machine's business, and stays in every clone.
        message: `Create organization ${slug}${options.from ? ` from ${basename(resolve(options.from))}/` : ''}\n`,
        complete: async (staging) => {
          await guardPushes(staging);
          await options.beforeAppearing?.(identity);
        },
      },
      this.options,
    );
    return this.get(slug);
  }
}

/**
 * The folder's members and those given, each address once: one given again in another case is
 * refused, as `member add` refuses it (USERLIST values match members whatever their case).
 */
function joinMembers(members: readonly string[], added: readonly string[]): string[] {
  const joined = [...new Set(members)];
  for (const email of added) {
    const known = memberCalled(joined, email);
    if (known === undefined) joined.push(email);
    else if (known !== email) throw new Error(`Member ${email} is ${known} in another case: an address is one member, whatever its case.`);
  }
  return joined;
}

function modelFiles(model: Model): FileChange[] {
  const files: FileChange[] = [{ path: ORGANIZATION_FILE, content: serializeOrganization(model.organization) }, ...SCHEMA_FILES];
  for (const kind of Object.keys(DIRECTORIES) as StoredKind[]) {
    for (const resource of collectionOf(model, kind).values()) {
      files.push({ path: resourcePath(kind, resource.id), content: serialize(kind, resource) });
    }
  }
  return files;
}

/**
 * Reads a folder of model files with the checks a push of it would meet: those of a repository's
 * tree, as incoming files (no tag but the core ones, no merge key, no number a double would
 * change), entries of a shape a push refuses (a linked or executable model file), and every ref
 * held to the one-name rule, the folder being all new. The folder is read as `c4store check`
 * reads it (check/directory.ts): a linked model file was skipped, and the organization made without it.
 */
async function loadFolder(folder: string): Promise<Model> {
  const { files, shapeProblems } = await modelFilesOf(folder);
  for (const [path, problem] of shapeProblems) throw new FileError(path, problem);
  const pathOf = (full: string) => relative(folder, full).split(sep).join('/');
  const model = await loadModel(files, { read: (full) => readFolderFile(full, pathOf(full)), incoming: true });
  checkNewNames(model, undefined);
  return model;
}
