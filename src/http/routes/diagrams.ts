import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { acceptRelationAliases, DiagramWireBody } from '../../model/current-form/seed-aliases.js';
import { diagramToDraw, refuseComparisonOfNoDrawing } from '../drawing.js';
import { acceptedExport, sendExport } from '../export.js';
import { checkRequestBody } from '../request-body.js';
import { present } from '../../model/present.js';
import { DiagramBody } from '../../model/schemas.js';
import type { Diagram } from '../../model/types.js';
import { writeModel } from '../../model/write/model.js';
import { findOne, readSnapshot, sendList, write, type RouteSettings } from '../resource.js';
import { send } from '../respond.js';
import { acceptedDrawing, sendDrawing } from '../../viewer/svg-response.js';

export function diagramRoutes(router: Router, writing: Middleware[], settings: RouteSettings): void {
  router.get('/diagram', async (ctx) => {
    const snapshot = await readSnapshot(ctx);
    await sendList(ctx, snapshot, 'diagram', snapshot.model.diagrams, (d: Diagram) =>
      present.diagram(d, snapshot.model, settings.publicUrl),
    );
  });
  router.get('/diagram/:id', async (ctx) => {
    const snapshot = await readSnapshot(ctx);
    // A drawing may be of a diagram the draft deleted (its visual diff, ?draft=&compare=main).
    const drawing = acceptedDrawing(ctx);
    if (drawing) return sendDrawing(ctx, snapshot, await diagramToDraw(ctx, snapshot), drawing);
    refuseComparisonOfNoDrawing(ctx);
    const diagram = findOne(ctx, 'diagram', snapshot.model.diagrams, true);
    const format = acceptedExport(ctx);
    if (format) return sendExport(ctx, snapshot, format, diagram);
    await send(ctx, present.diagram(diagram, snapshot.model, settings.publicUrl), snapshot);
  });
  router.post('/diagram', ...writing, async (ctx) => {
    acceptRelationAliases(ctx.request.body);
    const body = checkRequestBody(ctx, DiagramBody, DiagramWireBody);
    const { snapshot, result } = await write(ctx, (draft) => writeModel(draft, { diagrams: body }, ''));
    await send(
      ctx,
      result.diagrams.map((d) => present.diagram(d, snapshot.model, settings.publicUrl)),
      snapshot,
    );
  });
}
