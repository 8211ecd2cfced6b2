import type Router from '@koa/router';
import type { Mirrors } from '../../mirror/pusher.js';
import type { Orgs } from '../../service/orgs.js';
import type { KeyStore } from '../../store/keys.js';
import { ApiError } from '../../errors.js';
import { organizationOf, presentedKey } from '../middleware/auth.js';
import { send } from '../respond.js';

/**
 * `GET /healthz` needs no key and says `{"ok": true}`. With a valid key of an organization it
 * also shows how that organization's mirrors are doing, and nothing of any other one; their
 * URLs and git's error texts (which name hosts, and what a host answered) only to editor keys,
 * who manage the mirrors. While the instance is stopping it answers 503, so that a load balancer
 * sends its requests elsewhere; so it does while the keys file cannot be read.
 */
export function healthRoutes(
  router: Router,
  deps: { keys: KeyStore; orgs: Orgs; mirrors?: Mirrors; readiness?: { readonly draining: boolean } },
): void {
  router.get('/healthz', async (ctx) => {
    if (deps.readiness?.draining) throw new ApiError(503, 'Shutting down: this instance takes no new work.', { 'Retry-After': '1' });
    // Without its keys an instance serves nothing a client can use: it says so (503, naming the file).
    await deps.keys.readable();
    // A health check never answers 401: without a usable key it only says it is up.
    let key: string | undefined;
    try {
      key = presentedKey(ctx);
    } catch {
      key = undefined;
    }
    const record = key === undefined ? undefined : await deps.keys.verify(key);
    if (!record || !organizationOf(record, deps.orgs) || !deps.mirrors) {
      await send(ctx, { ok: true });
      return;
    }
    const mirrors = await deps.mirrors.statusOf(record.org);
    const shown = record.role === 'editor' ? mirrors : mirrors.map(({ url: _url, lastError: _lastError, ...progress }) => progress);
    await send(ctx, { ok: true, org: record.org, mirrors: shown });
  });
}
