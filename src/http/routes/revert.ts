import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { diffModels } from '../../history/diff.js';
import { RevertBody } from '../../history/schemas.js';
import { revertTo } from '../../model/write/revert.js';
import { resolveCommitName } from '../../service/commit-names.js';
import { state, write } from '../resource.js';
import { checkRequestBody } from '../request-body.js';
import { send } from '../respond.js';

/**
 * `POST /api/external/revert {commit}`: one new commit that restores the model as it was at
 * `commit`, made by the one write path (so it is checked like any write and refused whole);
 * history is never rewritten. A revert to what `main` already holds makes no commit.
 */
export function revertRoutes(router: Router, writing: Middleware[]): void {
  router.post('/revert', ...writing, async (ctx) => {
    const body = checkRequestBody(ctx, RevertBody);
    const { org } = state(ctx);
    const restored = await resolveCommitName(org.repo, body.commit);
    const target = await org.at(restored);
    let before = target.model;
    const { snapshot } = await write(ctx, (draft) => {
      before = draft.base;
      revertTo(draft, target.model);
    });
    await send(ctx, { commit: snapshot.commit, restored, changes: diffModels(before, snapshot.model) }, snapshot);
  });
}
