/**
 * Drawings off the event loop (issue 25): routing takes about 100 ms for 200 instances and
 * seconds for 1,000, which on the request's thread would hold every other request of the
 * process for as long. A diagram of OFF_THREAD_FROM instances and relations or more is drawn on
 * a worker thread (draw-worker.ts) — the very drawDiagram of svg.ts, given the diagram, the parts
 * of the model a drawing reads and the options — at most DRAWING_THREADS at once, the others
 * waiting their turn; smaller ones are drawn at once, where the round trip would cost more than
 * the drawing. Workers are kept between drawings, unreferenced: they never keep the process alive.
 */
import { availableParallelism } from 'node:os';
import { ApiError } from '../errors.js';
import type { Component, Diagram } from '../model/types.js';
import { moduleBeside, WorkerPool } from '../threads.js';
import { type DrawingModel, type DrawOptions, drawDiagram } from './svg.js';

/** Instances plus relations from which a diagram is drawn on a worker (50 instances and 61 relations take about 20 ms). */
export const OFF_THREAD_FROM = 150;
/** Drawings running on workers at once in the process (cores − 1, between 1 and 2); more wait. */
const DRAWING_THREADS = Math.min(2, Math.max(1, availableParallelism() - 1));
/** A drawing taking longer is cancelled (the routing's own budget keeps them to seconds). */
export const DEFAULT_DRAW_TIMEOUT = 60_000;

export interface DrawTask {
  diagram: Diagram;
  model: DrawingModel;
  options: DrawOptions;
}

const workers = new WorkerPool(moduleBeside(import.meta.url, 'draw-worker'), {
  resourceLimits: { maxOldGenerationSizeMb: 512 },
  keep: DRAWING_THREADS,
  slots: DRAWING_THREADS,
});

/** The parts of the model the drawing of `diagram` reads, as plain maps (a worker gets a copy). */
function drawingModel(diagram: Diagram, model: DrawingModel): DrawingModel {
  const components = new Map<string, Component>();
  for (const i of diagram.componentInstances) {
    const component = i.component === null ? undefined : model.components.get(i.component);
    if (component) components.set(component.id, component);
  }
  return { components, types: new Map(model.types), tags: new Map(model.tags) };
}

/** drawDiagram, on a worker thread when the diagram is large (see the module comment). */
export async function drawDiagramOffThread(
  diagram: Diagram,
  model: DrawingModel,
  options: DrawOptions = {},
  timeoutMs = DEFAULT_DRAW_TIMEOUT,
): Promise<string> {
  if (diagram.componentInstances.length + diagram.relations.length < OFF_THREAD_FROM) return drawDiagram(diagram, model, options);
  // Made when a worker is free: a drawing waiting its turn holds no copy of the model's parts.
  const task = (): DrawTask => ({
    diagram,
    model: drawingModel(diagram, model),
    options: options.marks ? { ...options, marks: new Map(options.marks) } : options,
  });
  const outcome = await workers.run<{ id: number; svg?: string; error?: string }>(task, timeoutMs);
  switch (outcome.kind) {
    case 'answer':
      if (outcome.message.svg !== undefined) return outcome.message.svg;
      throw new Error(`Drawing failed: ${outcome.message.error ?? 'no result'}`);
    case 'error':
      throw new Error(`Drawing failed: ${outcome.error.message}`);
    case 'exit':
      throw new Error('Drawing failed: the worker stopped');
    default:
      throw new ApiError(503, `Drawing the diagram took longer than ${timeoutMs / 1000} s and was cancelled.`);
  }
}
