import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { collectionOf, DIRECTORIES, emptyModel, ORGANIZATION_FILE, serialize, serializeOrganization, type StoredKind } from '../model/files.js';
import { SCHEMA_FILES } from '../editor/schemas.js';
import { newId } from '../model/ids.js';
import { loadModel } from '../model/load.js';
import type { Model } from '../model/types.js';
import { Repo, type Author, type FileChange } from '../store/repo.js';
import { OrgModel } from './org.js';

export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

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
}

/** The organizations of one data directory: `orgs/<slug>.git`, opened once and kept. */
export class Orgs {
  private readonly open = new Map<string, OrgModel>();

  constructor(
    readonly dataDir: string,
    private readonly options: { durable?: boolean; maxWaitingWrites?: number } = {},
  ) {}

  gitdir(slug: string): string {
    if (!SLUG_PATTERN.test(slug)) throw new Error(`Invalid organization slug ${JSON.stringify(slug)}`);
    return join(this.dataDir, 'orgs', `${slug}.git`);
  }

  exists(slug: string): boolean {
    return SLUG_PATTERN.test(slug) && existsSync(this.gitdir(slug));
  }

  async list(): Promise<string[]> {
    const names = await readdir(join(this.dataDir, 'orgs')).catch(() => [] as string[]);
    return names.filter((n) => n.endsWith('.git')).map((n) => n.slice(0, -4)).filter((s) => SLUG_PATTERN.test(s)).sort();
  }

  get(slug: string): OrgModel {
    let org = this.open.get(slug);
    if (!org) {
      if (!this.exists(slug)) throw new Error(`Organization '${slug}' does not exist.`);
      org = new OrgModel(slug, new Repo(this.gitdir(slug), this.options), this.options.maxWaitingWrites);
      this.open.set(slug, org);
    }
    return org;
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
      members: [...new Set([...model.organization.members, ...(options.members ?? [])])],
    };
    if (model.types.size === 0) {
      model.types = new Map(DEFAULT_TYPES.map(([typeSlug, name]) => {
        const id = newId();
        return [id, { id, slug: typeSlug, name }];
      }));
    }
    await Repo.init(this.gitdir(slug), {
      files: modelFiles(model),
      author: options.author,
      message: `Create organization ${slug}${options.from ? ` from ${options.from}` : ''}\n`,
    }, this.options);
    return this.get(slug);
  }
}

function modelFiles(model: Model): FileChange[] {
  const files: FileChange[] = [{ path: ORGANIZATION_FILE, content: serializeOrganization(model.organization) }, ...SCHEMA_FILES];
  for (const kind of Object.keys(DIRECTORIES) as StoredKind[]) {
    for (const resource of collectionOf(model, kind).values()) {
      files.push({ path: `${DIRECTORIES[kind]}/${resource.id}.yaml`, content: serialize(kind, resource) });
    }
  }
  return files;
}

/** Reads a folder of model files with the same checks as a repository's tree. */
async function loadFolder(folder: string): Promise<Model> {
  const files = new Map<string, string>();
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = relative(folder, join(entry.parentPath, entry.name)).split(sep).join('/');
    files.set(path, path);
  }
  return loadModel(files, { read: (path) => readFile(join(folder, path), 'utf8') });
}
