import type { StoredKind } from '../model/files.js';

/**
 * The schema line every model file starts with (`# yaml-language-server: $schema=…`), apart from
 * the schemas themselves (schemas.ts) so that the file format (src/model/files.ts) can use it
 * without importing the file schemas, which import it.
 */

export const SCHEMA_DIR = '.c4store/schemas';
const HEADER_PREFIX = '# yaml-language-server: $schema=';

export type FileKind = StoredKind | 'organization';

export const schemaPath = (kind: FileKind) => `${SCHEMA_DIR}/${kind}.json`;

/** The first line of the file at `path`: its schema, relative to the file (so any depth of folders works). */
export function schemaHeader(path: string, kind: FileKind): string {
  const depth = path.split('/').length - 1;
  return `${HEADER_PREFIX}${'../'.repeat(depth)}${schemaPath(kind)}\n`;
}

/** The text without its schema line: what the YAML parser reads (its fast path takes no comments). */
export function withoutSchemaHeader(text: string): string {
  if (!text.startsWith(HEADER_PREFIX)) return text;
  const end = text.indexOf('\n');
  return end === -1 ? '' : text.slice(end + 1);
}
