import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { checkRequestBody } from '../request-body.js';
import { present } from '../../model/present.js';
import { ComponentBody } from '../../model/schemas.js';
import type { Component, Model } from '../../model/types.js';
import { writeModel } from '../../model/write/model.js';
import { readSnapshot, sendList, sendOne, write } from '../resource.js';
import { send } from '../respond.js';

/**
 * PUT and POST behave alike: the PUT form's own example updates by id, so PUT creates
 * elements without id and updates those whose id exists, exactly as POST does.
 */
export function componentRoutes(router: Router, writing: Middleware[]): void {
  const writeHandler = async (ctx: Context) => {
    const body = checkRequestBody(ctx, ComponentBody);
    const { snapshot, result } = await write(ctx, (draft) => writeModel(draft, { components: body }, ''));
    await send(
      ctx,
      result.components.map((c) => present.component(c, snapshot.model)),
      snapshot,
    );
  };
  const presentIn = (model: Model) => (c: Component) => present.component(c, model);
  router.get('/component', async (ctx) => {
    const snapshot = await readSnapshot(ctx);
    await sendList(ctx, snapshot, 'component', snapshot.model.components, presentIn(snapshot.model));
  });
  router.get('/component/:id', async (ctx) => {
    const snapshot = await readSnapshot(ctx);
    await sendOne(ctx, snapshot, 'component', snapshot.model.components, presentIn(snapshot.model));
  });
  router.put('/component', ...writing, writeHandler);
  router.post('/component', ...writing, writeHandler);
}
