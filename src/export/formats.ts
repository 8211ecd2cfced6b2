import { refIndex } from '../model/draft.js';
import type { Diagram, Model } from '../model/types.js';
import { type Piece, textOf } from '../slices.js';
import { likec4 } from './likec4.js';
import { mermaid } from './mermaid.js';
import { plantuml } from './plantuml.js';
import { diagramScene, modelScene, type Scene } from './scene.js';
import { structurizr } from './structurizr.js';

/** The export formats: the name the command line takes, the media type HTTP negotiates, the renderer. */
export const EXPORT_FORMATS = {
  structurizr: { mediaType: 'text/vnd.structurizr.dsl', extension: 'dsl', render: structurizr },
  plantuml: { mediaType: 'text/x-plantuml', extension: 'puml', render: plantuml },
  mermaid: { mediaType: 'text/vnd.mermaid', extension: 'mmd', render: mermaid },
  likec4: { mediaType: 'text/vnd.likec4', extension: 'c4', render: likec4 },
} as const satisfies Record<string, { mediaType: string; extension: string; render: (scene: Scene) => Iterable<Piece> }>;

export type ExportFormat = keyof typeof EXPORT_FORMATS;

export const EXPORT_MEDIA_TYPES = Object.values(EXPORT_FORMATS).map((f) => f.mediaType);

export function formatOfMediaType(mediaType: string): ExportFormat | undefined {
  return (Object.keys(EXPORT_FORMATS) as ExportFormat[]).find((f) => EXPORT_FORMATS[f].mediaType === mediaType);
}

export function isExportFormat(name: string): name is ExportFormat {
  return Object.hasOwn(EXPORT_FORMATS, name);
}

/**
 * The whole model, or one of its diagrams, in `format`, as pieces of text and pauses for a
 * builder that lets other work in between (src/slices.ts).
 */
export function* exportPieces(format: ExportFormat, model: Model, diagram?: Diagram): Generator<Piece> {
  const scene = diagram === undefined ? yield* modelScene(model) : diagramScene(model, diagram);
  yield* EXPORT_FORMATS[format].render(scene);
}

/** The whole model, or one of its diagrams, in `format`, in one pass. */
export function exportModel(format: ExportFormat, model: Model, diagram?: Diagram): string {
  return textOf(exportPieces(format, model, diagram));
}

/** The diagram named by its id or, failing that, by its ref (as the current form's paths take them). */
export function findDiagram(model: Model, idOrRef: string): Diagram | undefined {
  const id = model.diagrams.has(idOrRef) ? idOrRef : refIndex(model.diagrams).get(idOrRef);
  return id === undefined ? undefined : model.diagrams.get(id);
}
