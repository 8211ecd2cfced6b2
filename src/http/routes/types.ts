import type Router from '@koa/router';
import { present } from '../../model/present.js';
import { sendFilteredList } from '../filtered-list.js';
import { readSnapshot, sendList, sendOne } from '../resource.js';

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
      await sendOne(ctx, snapshot, 'type', snapshot.model.types, present.type);
    });
  }
}
