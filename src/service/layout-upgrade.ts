import { classifyPath, layoutOf, resourcePath, SHARDED_KINDS } from '../model/paths.js';
import { isId } from '../model/ids.js';
import type { TreeChange } from '../store/repo.js';

/**
 * Moving a repository from the flat layout (`components/<id>.yaml`, before sharding) to the
 * sharded one (`components/<shard>/<id>.yaml`, src/model/paths.ts): every component and
 * diagram file is deleted from its old path and its blob, unchanged, put at the new one, all
 * in one commit, so `git log --follow` finds each file's earlier history through git's
 * exact-rename detection.
 */

export const LAYOUT_UPGRADE_TITLE = 'Move components and diagrams to the sharded layout';

/** The changes that move a tree (path → blob id) to the sharded layout; none when it is not flat. */
export function shardingMoves(files: ReadonlyMap<string, string>): TreeChange[] {
  if (layoutOf(files.keys()) !== 'flat') return [];
  const changes: TreeChange[] = [];
  for (const [path, blob] of files) {
    const place = classifyPath(path);
    // A file whose name is no id stays where it is, refused as before with its own message.
    if (place === null || place === 'organization' || !SHARDED_KINDS.has(place.kind) || !isId(place.id)) continue;
    const target = resourcePath(place.kind, place.id);
    if (target === path) continue;
    changes.push({ path, content: null }, { path: target, blob });
  }
  return changes;
}

export function layoutUpgradeMessage(moved: number): string {
  return (
    `${LAYOUT_UPGRADE_TITLE}: move ${moved}\n\n` +
    'components/<id>.yaml -> components/<shard>/<id>.yaml and diagrams/<id>.yaml -> diagrams/<shard>/<id>.yaml,\n' +
    'where <shard> is the first two hex digits of the SHA-256 of the id. Contents are unchanged:\n' +
    "`git log --follow <new path>` shows each file's earlier history.\n"
  );
}
