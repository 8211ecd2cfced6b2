import type { Diagram, Model } from '../model/types.js';
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
} as const satisfies Record<string, { mediaType: string; extension: string; render: (scene: Scene) => string }>;

export type ExportFormat = keyof typeof EXPORT_FORMATS;

export const EXPORT_MEDIA_TYPES = Object.values(EXPORT_FORMATS).map((f) => f.mediaType);

export function formatOfMediaType(mediaType: string): ExportFormat | undefined {
  return (Object.keys(EXPORT_FORMATS) as ExportFormat[]).find((f) => EXPORT_FORMATS[f].mediaType === mediaType);
}

export function isExportFormat(name: string): name is ExportFormat {
  return Object.hasOwn(EXPORT_FORMATS, name);
}

/** The whole model, or one of its diagrams, in `format`. */
export function exportModel(format: ExportFormat, model: Model, diagram?: Diagram): string {
  return EXPORT_FORMATS[format].render(diagram === undefined ? modelScene(model) : diagramScene(model, diagram));
}
