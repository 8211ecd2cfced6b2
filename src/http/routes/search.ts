import type Router from '@koa/router';
import type { Context } from 'koa';
import { ApiError } from '../../errors.js';
import type { Model } from '../../model/types.js';
import { searchComponents, searchDependencies, searchDiagrams, SearchError, type Filters } from '../../search/search.js';
import { readSnapshot, type RouteSettings } from '../resource.js';
import { send } from '../respond.js';

/** The current form's search endpoints; `?at=` searches an earlier commit. */
export function searchRoutes(router: Router, settings: RouteSettings): void {
  const route = (path: string, names: readonly string[], search: (model: Model, filters: Filters) => unknown) =>
    router.get(path, async (ctx: Context) => {
      const filters: Filters = {};
      for (const name of names) {
        const value = ctx.query[name];
        if (Array.isArray(value)) throw new ApiError(400, `Query parameter '${name}' is given more than once.`);
        if (value !== undefined) filters[name] = value;
      }
      const snapshot = await readSnapshot(ctx);
      let found: unknown;
      try {
        found = search(snapshot.model, filters);
      } catch (err) {
        if (err instanceof SearchError) throw new ApiError(400, err.message);
        throw err;
      }
      await send(ctx, found, snapshot);
    });
  route('/search/components', ['name', 'typeId', 'tagId', 'attributeId', 'attributeValue', 'state'], searchComponents);
  route('/search/diagrams', ['componentId', 'tagId', 'name', 'level', 'state'], (m, f) => searchDiagrams(m, f, settings.publicUrl));
  route('/search/dependencies', ['componentId'], searchDependencies);
}
