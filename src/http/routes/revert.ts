import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { answeredDiff } from '../../drafts/conflict-shape.js';
import { onFirstParentChain } from '../../history/log.js';
import { RevertBody } from '../../history/schemas.js';
import { revertTo } from '../../model/write/revert.js';
import { resolveCommitName } from '../../service/commit-names.js';
import { locateDraft } from '../../drafts/drafts.js';
import { ApiError } from '../../errors.js';
import { NotOnBranchError } from '../../store/branches.js';
import { gitText } from '../../store/git-cli.js';
import { MAIN_REF } from '../../store/refs.js';
import { queryValue, state, write, type RouteSettings } from '../resource.js';
import { checkRequestBody } from '../request-body.js';
import { send } from '../respond.js';

/**
 * `POST /api/external/revert {commit}`: one new commit that restores the model as it was at
 * `commit`, made by the one write path (so it is checked like any write and refused whole);
 * history is never rewritten. A revert to what `main` already holds makes no commit.
 */
export function revertRoutes(router: Router, writing: Middleware[], settings: RouteSettings): void {
  router.post('/revert', ...writing, async (ctx) => {
    const body = checkRequestBody(ctx, RevertBody);
    const { org } = state(ctx);
    const restored = await resolveCommitName(org.repo, body.commit);
    // A state the branch written to has had: a commit of its first-parent chain, as the change
    // feed counts them. Not a draft's, merged or not (merging is how its work comes to main), nor
    // a commit no branch holds any more.
    const draft = queryValue(ctx, 'draft');
    const branch = draft === undefined ? MAIN_REF : (await locateDraft(org, draft)).ref;
    if (!(await onFirstParentChain(org.repo.gitdir, restored, branch)))
      throw new ApiError(404, new NotOnBranchError(body.commit, branch).message);
    const target = await org.at(restored);
    let before = target.model;
    const subject = (await gitText(org.repo.gitdir, ['log', '-1', '--format=%s', restored])).trim();
    // What it restored, as people say it: the version named (if one was), the commit, its title.
    const named = /^[0-9a-f]{4,40}$/i.test(body.commit) ? '' : `${body.commit}, `;
    const spoken = `Restored the model of ${named}${restored.slice(0, 7)}${subject === '' ? '' : ` (${subject})`}`;
    const { snapshot } = await write(
      ctx,
      (draft) => {
        before = draft.base;
        revertTo(draft, target.model);
      },
      () => spoken,
    );
    await send(ctx, { commit: snapshot.commit, restored, changes: answeredDiff(before, snapshot.model, settings.publicUrl) }, snapshot);
  });
}
