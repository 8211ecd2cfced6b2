import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { acceptRelationAliases, ModelWireBody } from '../../model/current-form/seed-aliases.js';
import { acceptedExport, sendExport } from '../export.js';
import { checkRequestBody } from '../request-body.js';
import { present } from '../../model/present.js';
import { ModelBody } from '../../model/schemas.js';
import type { Model } from '../../model/types.js';
import { writeModel } from '../../model/write/model.js';
import { readSnapshot, write, type RouteSettings } from '../resource.js';
import { send, sendFromSnapshot } from '../respond.js';
import { mapped } from '../../slices.js';

export function modelRoutes(router: Router, writing: Middleware[], settings: RouteSettings): void {
  // Lists presented lazily, item by item inside the slices of the build (src/slices.ts).
  const presentModel = (model: Model) => ({
    types: mapped(model.types.values(), present.type),
    tags: mapped(model.tags.values(), present.tag),
    attributes: mapped(model.attributes.values(), present.attribute),
    components: mapped(model.components.values(), (c) => present.component(c, model)),
    diagrams: mapped(model.diagrams.values(), (d) => present.diagram(d, model, settings.publicUrl)),
  });
  router.get('/model', async (ctx) => {
    const snapshot = await readSnapshot(ctx);
    const format = acceptedExport(ctx);
    if (format) return sendExport(ctx, snapshot, format);
    await sendFromSnapshot(ctx, snapshot, 'model', () => presentModel(snapshot.model));
  });
  router.post('/model', ...writing, async (ctx) => {
    acceptRelationAliases((ctx.request.body as { diagrams?: unknown } | null)?.diagrams);
    const body = checkRequestBody(ctx, ModelBody, ModelWireBody);
    const { snapshot, result } = await write(ctx, (draft) => writeModel(draft, body, 'components.'));
    await send(
      ctx,
      {
        components: result.components.map((c) => present.component(c, snapshot.model)),
        diagrams: result.diagrams.map((d) => present.diagram(d, snapshot.model, settings.publicUrl)),
      },
      snapshot,
    );
  });
}
