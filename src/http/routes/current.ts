import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { ApiError } from '../../errors.js';
import { presentCurrent } from '../../model/current-form/present.js';
import { CURRENT_SCHEMAS, type WritableKind } from '../../model/current-form/schemas.js';
import { present } from '../../model/present.js';
import type { Component, Diagram, Model } from '../../model/types.js';
import { writeCurrent, type CurrentRequest, type CurrentResult, type Mode } from '../../model/write/current.js';
import { deleteResource } from '../../model/write/delete.js';
import { requireEditor } from '../middleware/auth.js';
import { filteredAnswers, sendFilteredList } from '../filtered-list.js';
import { findOne, queryValue, readSnapshot, sendOne, write, type RouteSettings } from '../resource.js';
import { send, sendFromSnapshot } from '../respond.js';
import { reportIgnoredFields } from '../request-body.js';
import { Type } from 'typebox';
import { dependenciesOf } from '../../search/search.js';
import { acceptedDrawing, sendDrawing } from '../../viewer/svg-response.js';
import { diagramToDraw, refuseComparisonOfNoDrawing } from '../drawing.js';
import { acceptedExport, sendExport } from '../export.js';

/**
 * The current form of the API (issue 11, CONTRACT.md §7) on the plural paths: GET list,
 * POST one object (201), GET by id or ref, PATCH partial, PATCH upsert-batch, DELETE. The
 * seed's forms keep their own paths and shapes; where paths overlap (`/attributes`, `/types`)
 * the seed's behaviour stays and the body tells the forms apart (docs/api.md).
 */

const PLURAL = { tag: 'tags', attribute: 'attributes', component: 'components', diagram: 'diagrams' } as const;

type Presenter = (kind: WritableKind, model: Model) => (resource: { id: string }) => unknown;

function currentPresenter(settings: RouteSettings): Presenter {
  return (kind, model) => {
    switch (kind) {
      case 'tag':
        return presentCurrent.tag as (r: { id: string }) => unknown;
      case 'attribute':
        return presentCurrent.attribute as (r: { id: string }) => unknown;
      case 'component':
        return ((c: Component) => presentCurrent.component(c, model)) as (r: { id: string }) => unknown;
      case 'diagram':
        return ((d: Diagram) => presentCurrent.diagram(d, model, settings.publicUrl)) as (r: { id: string }) => unknown;
    }
  };
}

function seedPresenter(settings: RouteSettings): Presenter {
  return (kind, model) => {
    switch (kind) {
      case 'tag':
        return present.tag as (r: { id: string }) => unknown;
      case 'attribute':
        return present.attribute as (r: { id: string }) => unknown;
      case 'component':
        return ((c: Component) => present.component(c, model)) as (r: { id: string }) => unknown;
      case 'diagram':
        return ((d: Diagram) => present.diagram(d, model, settings.publicUrl)) as (r: { id: string }) => unknown;
    }
  };
}

function collection(model: Model, kind: WritableKind): ReadonlyMap<string, { id: string }> {
  return { tag: model.tags, attribute: model.attributes, component: model.components, diagram: model.diagrams }[kind];
}

function resultOf(result: CurrentResult, kind: WritableKind): unknown[] {
  return result[PLURAL[kind]];
}

function objectBody(ctx: Context): Record<string, unknown> {
  const body = ctx.request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError(
      400,
      `Invalid JSON: Expected object, received ${body === null ? 'null' : Array.isArray(body) ? 'array' : typeof body}`,
    );
  }
  return body as Record<string, unknown>;
}

function arrayBody(ctx: Context): unknown[] {
  const body = ctx.request.body;
  if (!Array.isArray(body)) throw new ApiError(400, `Invalid JSON: Expected array, received ${body === null ? 'null' : typeof body}`);
  return body;
}

function cascadeOf(ctx: Context): boolean {
  const value = queryValue(ctx, 'cascade');
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new ApiError(400, `Invalid cascade '${value}': use true or false.`);
}

/** `POST /api/external/<plural>` with one object: create, 201. Also reached by `POST /attributes` with an object body. */
export function createHandler(kind: WritableKind, settings: RouteSettings) {
  const presenter = currentPresenter(settings);
  return async (ctx: Context) => {
    const body = objectBody(ctx);
    reportIgnoredFields(ctx, CURRENT_SCHEMAS[kind], body);
    const request: CurrentRequest = { [PLURAL[kind]]: [body] };
    const { snapshot, result } = await write(ctx, (draft) => writeCurrent(draft, request, 'create', 'single'));
    const created = resultOf(result, kind)[0] as { id: string };
    await send(ctx, presenter(kind, snapshot.model)(created), snapshot);
    ctx.status = 201;
    ctx.set('Location', `/api/external/${PLURAL[kind]}/${encodeURIComponent(created.id)}`);
  };
}

export function currentRoutes(router: Router, writing: Middleware[], settings: RouteSettings): void {
  const presenter = currentPresenter(settings);
  const seed = seedPresenter(settings);

  const deleteHandler = (kind: WritableKind, presentIn: Presenter) => async (ctx: Context) => {
    const cascade = cascadeOf(ctx);
    let deleted: unknown;
    const { snapshot } = await write(ctx, (draft) => {
      // By id only: a retried DELETE must be 404, never the resource whose ref is that id.
      deleted = presentIn(kind, draft.base)(deleteResource(draft, kind, String(ctx.params.id), cascade));
    });
    await send(ctx, deleted, snapshot);
  };

  for (const kind of ['tag', 'attribute', 'component', 'diagram'] as const) {
    const path = `/${PLURAL[kind]}`;
    const write1 = (mode: Mode, request: (ctx: Context) => CurrentRequest, shape: 'single' | 'array') => async (ctx: Context) => {
      const body = request(ctx);
      const { snapshot, result } = await write(ctx, (draft) => writeCurrent(draft, body, mode, shape));
      const shown = resultOf(result, kind).map((r) => presenter(kind, snapshot.model)(r as { id: string }));
      await send(ctx, shape === 'single' ? shown[0] : shown, snapshot);
    };

    // /attributes and its GETs and POST are shared with the seed's forms (routes/attributes.ts).
    if (kind !== 'attribute') {
      router.get(path, async (ctx) => {
        const snapshot = await readSnapshot(ctx);
        await sendFilteredList(ctx, snapshot, kind, collection(snapshot.model, kind), presenter(kind, snapshot.model), ':current');
      });
      router.post(path, ...writing, createHandler(kind, settings));
    }
    router.patch(
      `${path}/upsert-batch`,
      ...writing,
      write1(
        'upsert',
        (ctx) => {
          const body = arrayBody(ctx);
          reportIgnoredFields(ctx, Type.Array(CURRENT_SCHEMAS[kind]), body);
          return { [PLURAL[kind]]: body };
        },
        'array',
      ),
    );
    if (kind !== 'attribute') {
      router.get(`${path}/:id`, async (ctx) => {
        const snapshot = await readSnapshot(ctx);
        // `Accept: image/svg+xml` or `image/png` on a diagram: its drawing (docs/api.md §8; with
        // ?draft=&compare=main also of a diagram the draft deleted); an export's media type: the
        // export (§15), as on the seed's path.
        const drawing = kind === 'diagram' ? acceptedDrawing(ctx) : undefined;
        if (drawing) return sendDrawing(ctx, snapshot, await diagramToDraw(ctx, snapshot), drawing);
        if (kind === 'diagram') refuseComparisonOfNoDrawing(ctx);
        const format = kind === 'diagram' ? acceptedExport(ctx) : undefined;
        if (format) return sendExport(ctx, snapshot, format, findOne(ctx, 'diagram', snapshot.model.diagrams, true));
        await sendOne(ctx, snapshot, kind, collection(snapshot.model, kind), presenter(kind, snapshot.model));
      });
    }
    router.patch(`${path}/:id`, ...writing, async (ctx) => {
      const patch = objectBody(ctx);
      reportIgnoredFields(ctx, CURRENT_SCHEMAS[kind], patch);
      const { snapshot, result } = await write(ctx, (draft) => {
        const id = findOne(ctx, kind, collection(draft.base, kind), true).id;
        return writeCurrent(draft, { [PLURAL[kind]]: [{ ...patch, id }] }, 'upsert', 'single');
      });
      await send(ctx, presenter(kind, snapshot.model)(resultOf(result, kind)[0] as { id: string }), snapshot);
    });
    router.delete(`${path}/:id`, requireEditor, deleteHandler(kind, presenter));
    // The seed's singular paths delete too, answering in the seed's shapes.
    router.delete(`/${kind}/:id`, requireEditor, deleteHandler(kind, seed));
  }

  // The components directly related to one (by id or ref), as `/search/dependencies` finds them.
  // Kept per commit like a filtered list: an agent asks this of each component it looks at.
  router.get('/components/:id/dependencies', async (ctx) => {
    const snapshot = await readSnapshot(ctx);
    const component = findOne(ctx, 'component', snapshot.model.components, true);
    await sendFromSnapshot(
      ctx,
      snapshot,
      `dependencies:${component.id}`,
      () => dependenciesOf(snapshot.model, component.id),
      filteredAnswers.of(snapshot),
    );
  });
}

const TYPE_PATH = /^\/api\/external\/types?\/[^/]+\/?$/;

/**
 * DELETE on a type: not a method of the path (`Allow: GET, HEAD`), so, like any other, refused
 * before the key is looked at, with the reason in words. Not a route: a route of any router would
 * put DELETE into the `Allow` the routers compute for the path's other methods.
 */
export const refuseTypeDeletes: Middleware = async (ctx, next) => {
  if (ctx.method === 'DELETE' && TYPE_PATH.test(ctx.path)) throw new ApiError(405, 'Types cannot be deleted.', { Allow: 'GET, HEAD' });
  await next();
};
