import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { checkRequestBody } from '../request-body.js';
import { present } from '../../model/present.js';
import { TagBody } from '../../model/schemas.js';
import { writeTags } from '../../model/write/tags.js';
import { readSnapshot, sendList, sendOne, write } from '../resource.js';
import { send } from '../respond.js';

export function tagRoutes(router: Router, writing: Middleware[]): void {
  router.get('/tag', async (ctx) => {
    const snapshot = await readSnapshot(ctx);
    await sendList(ctx, snapshot, 'tag', snapshot.model.tags, present.tag);
  });
  router.get('/tag/:id', async (ctx) => {
    const snapshot = await readSnapshot(ctx);
    await sendOne(ctx, snapshot, 'tag', snapshot.model.tags, present.tag);
  });
  router.post('/tag', ...writing, async (ctx) => {
    const body = checkRequestBody(ctx, TagBody);
    const { snapshot, result } = await write(ctx, (draft) => writeTags(draft, body));
    await send(ctx, result.map(present.tag), snapshot);
  });
}
