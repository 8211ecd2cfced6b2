import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { acceptRelationAliases } from '../../model/current-form/seed-aliases.js';
import { acceptedExport, sendExport } from '../export.js';
import { checkRequestBody } from '../request-body.js';
import { present } from '../../model/present.js';
import { DiagramBody } from '../../model/schemas.js';
import type { Diagram } from '../../model/types.js';
import { writeModel } from '../../model/write/model.js';
import { readSnapshot, sendList, sendOne, write, type RouteSettings } from '../resource.js';
import { send, setEtag } from '../respond.js';
import { diagramSvg } from '../drawing.js';
import { sendSvg, wantsSvg } from '../../viewer/svg-response.js';

export function diagramRoutes(router: Router, writing: Middleware[], settings: RouteSettings): void {
  router.get('/diagram', async (ctx) => {
    const snapshot = await readSnapshot(ctx);
    await sendList(ctx, snapshot, 'diagram', snapshot.model.diagrams, (d: Diagram) =>
      present.diagram(d, snapshot.model, settings.publicUrl),
    );
  });
  router.get('/diagram/:id', async (ctx) => {
    const snapshot = await readSnapshot(ctx);
    const drawn = wantsSvg(ctx) ? snapshot.model.diagrams.get(String(ctx.params.id)) : undefined;
    if (drawn) {
      setEtag(ctx, snapshot);
      sendSvg(ctx, await diagramSvg(ctx, snapshot, drawn));
      return;
    }
    const format = acceptedExport(ctx);
    const diagram = snapshot.model.diagrams.get(String(ctx.params.id));
    if (format && diagram) return sendExport(ctx, snapshot, format, diagram);
    await sendOne(ctx, snapshot, 'diagram', snapshot.model.diagrams, (d: Diagram) =>
      present.diagram(d, snapshot.model, settings.publicUrl),
    );
  });
  router.post('/diagram', ...writing, async (ctx) => {
    acceptRelationAliases(ctx.request.body);
    const body = checkRequestBody(ctx, DiagramBody);
    const { snapshot, result } = await write(ctx, (draft) => writeModel(draft, { diagrams: body }, ''));
    await send(
      ctx,
      result.diagrams.map((d) => present.diagram(d, snapshot.model, settings.publicUrl)),
      snapshot,
    );
  });
}
