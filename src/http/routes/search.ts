import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Model } from '../../model/types.js';
import { readFilters } from '../../search/filters.js';
import {
  COMPONENT_FILTERS,
  DIAGRAM_FILTERS,
  searchComponents,
  searchDependencies,
  searchDiagrams,
  type Filters,
} from '../../search/search.js';
import { asBadRequest } from '../filtered-list.js';
import { readSnapshot, type RouteSettings } from '../resource.js';
import { send } from '../respond.js';

/** What the search paths take besides their filters. */
const SEARCH_PARAMETERS = ['at', 'draft'];

/** The current form's search endpoints; `?at=` searches an earlier commit. */
export function searchRoutes(router: Router, settings: RouteSettings): void {
  const route = (path: string, names: readonly string[], search: (model: Model, filters: Filters) => unknown) =>
    router.get(path, async (ctx: Context) => {
      const filters = asBadRequest(() => readFilters(ctx.query, names, SEARCH_PARAMETERS, `GET ${ctx.path}`));
      const snapshot = await readSnapshot(ctx);
      await send(
        ctx,
        asBadRequest(() => search(snapshot.model, filters)),
        snapshot,
      );
    });
  route('/search/components', COMPONENT_FILTERS, searchComponents);
  route('/search/diagrams', DIAGRAM_FILTERS, (m, f) => searchDiagrams(m, f, settings.publicUrl));
  route('/search/dependencies', ['componentId'], searchDependencies);
}
