/**
 * Drawings already made, kept so that a diagram looked at again — its page reloaded, its `.svg`
 * embedded in a wiki, its PNG, the agents' render — is not laid out and routed again: routing
 * takes ~7 ms for 40 instances, ~100 ms for 200, seconds for 1,000.
 *
 * A drawing depends on the diagram and on the components, types and tags it shows. A snapshot's
 * collections are never changed once handed out (layered-map.ts: a write makes new ones for the
 * kinds it touches), so "the same four objects" means "the same drawing": a cached drawing is
 * used only when the diagram and the model's three collections are the very objects it was
 * drawn from. A write to another diagram keeps the drawing; a renamed component makes every
 * drawing of that model new.
 *
 * Kept up to a total size (the oldest used first out), and at most a few variants per diagram
 * (the page's, with links and handles, and the bare `.svg`). A draft's visual diff (`marks`) is
 * drawn each time: its marks are made per request. A failed or cancelled drawing is not kept.
 */
import type { Diagram } from '../model/types.js';
import { drawDiagramOffThread } from './draw-pool.js';
import type { DrawingModel, DrawOptions } from './svg.js';

/** The default size of the drawings kept in the process, in UTF-16 code units of SVG (~2 bytes each). */
export const DRAWINGS_KEPT_CHARS = 32 * 1024 * 1024;
/** Variants kept per diagram object (options × models it was drawn with). */
const VARIANTS_PER_DIAGRAM = 4;

type ModelPart = DrawingModel['components' | 'types' | 'tags'];

interface Variant {
  options: string;
  // Held weakly: a kept drawing must not keep an old snapshot's 10,000-component map alive.
  // Once one is collected, no model can match the variant again; it waits to be trimmed.
  model: WeakRef<ModelPart>[];
  svg: Promise<string>;
  /** The SVG's length once drawn (0 while drawing). */
  chars: number;
}

export class DrawingCache {
  // A Map iterates in insertion order: re-inserting a diagram on each use keeps the least
  // recently used first.
  private readonly byDiagram = new Map<Diagram, Variant[]>();
  private keptChars = 0;

  constructor(private readonly maxChars = DRAWINGS_KEPT_CHARS) {}

  /** What is kept: drawings (finished or under way) and their total length. */
  get size(): { drawings: number; chars: number } {
    let drawings = 0;
    for (const variants of this.byDiagram.values()) drawings += variants.length;
    return { drawings, chars: this.keptChars };
  }

  /** The drawing of `diagram` in `model` with `options`: kept, under way, or drawn now (drawDiagramOffThread). */
  draw(diagram: Diagram, model: DrawingModel, options: DrawOptions = {}): Promise<string> {
    if (options.marks !== undefined) return drawDiagramOffThread(diagram, model, options);
    const key = optionsKey(options);
    const parts: ModelPart[] = [model.components, model.types, model.tags];
    const variants = this.byDiagram.get(diagram) ?? [];
    this.byDiagram.delete(diagram);
    this.byDiagram.set(diagram, variants);
    const kept = variants.find((v) => v.options === key && v.model.every((part, i) => part.deref() === parts[i]));
    if (kept !== undefined) return kept.svg;

    const variant: Variant = {
      options: key,
      model: parts.map((part) => new WeakRef(part)),
      svg: drawDiagramOffThread(diagram, model, options),
      chars: 0,
    };
    variants.push(variant);
    if (variants.length > VARIANTS_PER_DIAGRAM) this.forget(diagram, variants[0]!);
    variant.svg.then(
      (svg) => {
        if (!variants.includes(variant) || this.byDiagram.get(diagram) !== variants) return;
        variant.chars = svg.length;
        this.keptChars += svg.length;
        this.trim();
      },
      () => this.forget(diagram, variant),
    );
    return variant.svg;
  }

  private forget(diagram: Diagram, variant: Variant): void {
    const variants = this.byDiagram.get(diagram);
    const at = variants?.indexOf(variant) ?? -1;
    if (variants === undefined || at < 0) return;
    variants.splice(at, 1);
    this.keptChars -= variant.chars;
    if (variants.length === 0) this.byDiagram.delete(diagram);
  }

  private trim(): void {
    for (const [diagram, variants] of this.byDiagram) {
      if (this.keptChars <= this.maxChars) return;
      for (const variant of [...variants]) this.forget(diagram, variant);
    }
  }
}

function optionsKey(options: DrawOptions): string {
  return JSON.stringify([options.componentHref ?? null, options.editable === true, options.legend !== false, options.shared === true]);
}

/** The process's drawings, shared by the viewer, the API, share links and the agents. */
export const drawings = new DrawingCache();

/** A drawing of the diagram, kept for the next time it is asked for (see the module comment). */
export function drawingOf(diagram: Diagram, model: DrawingModel, options: DrawOptions = {}): Promise<string> {
  return drawings.draw(diagram, model, options);
}
