import type Router from '@koa/router';
import { present } from '../../model/present.js';
import { sendFilteredList } from '../filtered-list.js';
import { ApiError } from '../../errors.js';
import { readSnapshot, sendList } from '../resource.js';
import { send } from '../respond.js';

export function typeRoutes(router: Router): void {
  for (const path of ['/type', '/types']) {
    router.get(path, async (ctx) => {
      const snapshot = await readSnapshot(ctx);
      // The current form's list takes filters; the seed's takes none (and ignores what it is sent).
      const list = path === '/types' ? sendFilteredList : sendList;
      await list(ctx, snapshot, 'type', snapshot.model.types, present.type);
    });
    router.get(`${path}/:id`, async (ctx) => {
      const snapshot = await readSnapshot(ctx);
      const types = snapshot.model.types;
      const name = String(ctx.params.id);
      // By id first, else by slug: the API document names types by either.
      const type = types.get(name) ?? [...types.values()].find((each) => each.slug === name);
      if (type === undefined) throw new ApiError(404, `Type with id '${name}' does not exist.`);
      await send(ctx, present.type(type), snapshot);
    });
  }
}
