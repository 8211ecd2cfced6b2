import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { ApiError } from '../../errors.js';
import { presentCurrent } from '../../model/current-form/present.js';
import { writeCurrent } from '../../model/write/current.js';
import { CURRENT_SCHEMAS } from '../../model/current-form/schemas.js';
import { Type } from 'typebox';
import { write, type RouteSettings } from '../resource.js';
import { send } from '../respond.js';
import { reportIgnoredFields } from '../request-body.js';

/** The fields a template body may hold, for C4store-Ignored-Fields. */
const TEMPLATE_FIELDS = Type.Object({
  components: Type.Array(CURRENT_SCHEMAS.component),
  diagrams: Type.Array(CURRENT_SCHEMAS.diagram),
});

/**
 * `POST /api/external/template`: `{components, diagrams}` (JSON or YAML, both default to
 * `[]` when omitted; null is refused) in one commit, in the shapes of the plural endpoints.
 * An element with an `id` or a stored `ref` updates that resource partially; an unknown `id`
 * creates it with that id.
 */
export function templateRoutes(router: Router, writing: Middleware[], settings: RouteSettings): void {
  router.post('/template', ...writing, async (ctx) => {
    const body = ctx.request.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new ApiError(
        400,
        `Invalid JSON: Expected object, received ${body === null ? 'null' : Array.isArray(body) ? 'array' : typeof body}`,
      );
    }
    reportIgnoredFields(ctx, TEMPLATE_FIELDS, body);
    const { components = [], diagrams = [] } = body as { components?: unknown; diagrams?: unknown };
    const { snapshot, result } = await write(ctx, (draft) =>
      writeCurrent(draft, { components: components as unknown[], diagrams: diagrams as unknown[] }, 'upsert', 'template'),
    );
    await send(
      ctx,
      {
        components: result.components.map((c) => presentCurrent.component(c, snapshot.model)),
        diagrams: result.diagrams.map((d) => presentCurrent.diagram(d, snapshot.model, settings.publicUrl)),
      },
      snapshot,
    );
  });
}
