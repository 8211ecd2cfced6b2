import { FILE_SCHEMAS, OrganizationFile } from '../model/file-schemas.js';
import { blobOid } from '../store/git-format.js';
import { type FileKind, schemaPath } from './header.js';

/**
 * JSON Schemas of the model files, for editors: committed into every organization repository
 * under `.c4store/schemas/` and named by each file's first line
 * (`# yaml-language-server: $schema=…`), so a clone validates and completes in any editor that
 * runs yaml-language-server (VS Code with its YAML extension, Neovim, Helix, …). Built from the
 * TypeBox schemas the service checks every file against on load (src/model/file-schemas.ts).
 */

export { SCHEMA_DIR, schemaPath } from './header.js';

const TITLES: Record<FileKind, string> = {
  organization: 'c4store organization.yaml',
  type: 'c4store type (types/…)',
  tag: 'c4store tag (tags/…)',
  attribute: 'c4store attribute (attributes/…)',
  component: 'c4store component (components/…)',
  diagram: 'c4store diagram (diagrams/…)',
};

function schemaDocument(kind: FileKind): string {
  const schema = kind === 'organization' ? OrganizationFile : FILE_SCHEMAS[kind];
  // Plain JSON: TypeBox's own markers live in non-enumerable and symbol keys, which JSON drops.
  const document = { $schema: 'https://json-schema.org/draft/2020-12/schema', title: TITLES[kind], ...JSON.parse(JSON.stringify(schema)) };
  return `${JSON.stringify(document, null, 2)}\n`;
}

/** Every schema file, as a repository holds it. */
export const SCHEMA_FILES: ReadonlyArray<{ path: string; content: string }> = (Object.keys(TITLES) as FileKind[]).map((kind) => ({
  path: schemaPath(kind),
  content: schemaDocument(kind),
}));

/** The git blob id of each schema file as it should be: a tree holding other ids is out of date. */
const BLOB_IDS = new Map(SCHEMA_FILES.map(({ path, content }) => [path, blobOid(Buffer.from(content))]));

/** Whether a commit's files (path → blob id) hold the current schemas. */
export function schemasCurrent(files: ReadonlyMap<string, string>): boolean {
  for (const [path, oid] of BLOB_IDS) if (files.get(path) !== oid) return false;
  return true;
}
