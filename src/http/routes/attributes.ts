import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { sendFilteredList } from '../filtered-list.js';
import { checkRequestBody } from '../request-body.js';
import { present } from '../../model/present.js';
import { AttributeBody } from '../../model/schemas.js';
import { writeAttributes } from '../../model/write/attributes.js';
import { readSnapshot, sendList, sendOne, write, type RouteSettings } from '../resource.js';
import { send } from '../respond.js';
import { createHandler } from './current.js';

/**
 * Served at `/attribute` and, for clients of the other contract form, `/attributes`. The
 * current form shares `/attributes`: there a POST of one object (not an array) is its single
 * create.
 */
export function attributeRoutes(router: Router, writing: Middleware[], settings: RouteSettings): void {
  const createOne = createHandler('attribute', settings);
  const writeHandler = (createOnly: boolean) => async (ctx: Context) => {
    const body = checkRequestBody(ctx, AttributeBody);
    const { snapshot, result } = await write(ctx, (draft) => writeAttributes(draft, body, createOnly));
    await send(ctx, result.map(present.attribute), snapshot);
  };
  for (const path of ['/attribute', '/attributes']) {
    router.get(path, async (ctx) => {
      const snapshot = await readSnapshot(ctx);
      // The current form's list takes filters; the seed's takes none (and ignores what it is sent).
      const list = path === '/attributes' ? sendFilteredList : sendList;
      await list(ctx, snapshot, 'attribute', snapshot.model.attributes, present.attribute);
    });
    router.get(`${path}/:id`, async (ctx) => {
      const snapshot = await readSnapshot(ctx);
      await sendOne(ctx, snapshot, 'attribute', snapshot.model.attributes, present.attribute);
    });
    router.put(path, ...writing, writeHandler(true));
    const update = writeHandler(false);
    router.post(
      path,
      ...writing,
      path === '/attributes' ? (ctx) => (Array.isArray(ctx.request.body) ? update(ctx) : createOne(ctx)) : update,
    );
  }
}
