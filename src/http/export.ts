import type { Context } from 'koa';
import { EXPORT_FORMATS, EXPORT_MEDIA_TYPES, exportPieces, formatOfMediaType, type ExportFormat } from '../export/formats.js';
import type { Diagram } from '../model/types.js';
import type { Snapshot } from '../service/org.js';
import { sendRendered, YAML_TYPES } from './respond.js';

/**
 * The export format a GET asks for by `Accept`, if any. JSON stays the answer to `*\/*` and to
 * a missing header (it is named first); an export only when the client prefers its media type.
 */
export function acceptedExport(ctx: Context): ExportFormat | undefined {
  const chosen = ctx.accepts('application/json', ...YAML_TYPES, ...EXPORT_MEDIA_TYPES);
  return typeof chosen === 'string' ? formatOfMediaType(chosen) : undefined;
}

/** Answers the whole model, or one diagram, in an export format. */
export function sendExport(ctx: Context, snapshot: Snapshot, format: ExportFormat, diagram?: Diagram): Promise<void> {
  return sendRendered(ctx, snapshot, `export:${format}:${diagram?.id ?? 'model'}`, EXPORT_FORMATS[format].mediaType, () =>
    exportPieces(format, snapshot.model, diagram),
  );
}
