import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { VersionBody } from '../../history/schemas.js';
import { createVersion, listVersions } from '../../history/versions.js';
import { checkRequestBody } from '../request-body.js';
import { checkPreconditions } from '../../service/org.js';
import { authorOf, mainOnly, preconditions, readSnapshot, state } from '../resource.js';
import { send, setEtag } from '../respond.js';

/** Named versions of the model: annotated git tags, listed and made over the API. */
export function versionRoutes(router: Router, writing: Middleware[]): void {
  for (const path of ['/version', '/versions']) {
    router.get(path, async (ctx) => {
      mainOnly(ctx, 'Versions');
      const { org } = state(ctx);
      // The commit read names the answer, but never answers 304: a version is made beside main, which does not move.
      setEtag(ctx, await readSnapshot(ctx));
      await send(ctx, await listVersions(org.repo.gitdir));
    });
    router.post(path, ...writing, async (ctx) => {
      mainOnly(ctx, 'Versions');
      const body = checkRequestBody(ctx, VersionBody);
      const { org } = state(ctx);
      const head = await org.head();
      checkPreconditions(preconditions(ctx), head.commit);
      const version = await createVersion(org.repo.gitdir, {
        name: body.name,
        desc: body.desc ?? null,
        commit: head.commit,
        tagger: authorOf(ctx),
      });
      ctx.status = 201;
      // A version has no page of its own: it names the model as it was.
      ctx.set('Location', `/api/external/model?at=${encodeURIComponent(version.name)}`);
      await send(ctx, version, head);
    });
  }
}
