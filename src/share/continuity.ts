import { pathsOfResource, readHistory } from '../history/log.js';
import type { ShareLink } from './links.js';

/** Links remembered; past this many, forgotten all at once (each is then read again from its own commit). */
const MAX_KNOWN = 10_000;
/** Changes of one diagram read at a time: a diagram changed more often since is read page by page. */
const PAGE = 1_000;

/** How far main's history has been read for one link, and what it said. */
interface Known {
  commit: string;
  unbroken: boolean;
}

/**
 * A share link opens the diagram it was made for, not a later one under the same id: a
 * pipeline that deletes a diagram and makes another with that (client-chosen) id must not
 * publish the new one through the old link. Whether the diagram was deleted on main since the
 * link was made is main's history's answer (its first-parent chain, docs/api.md §7.2), read
 * whole however often the diagram changed since, and each time only from where it was last read:
 * main moves only forward, so a link once ended stays ended, and one unbroken up to a commit is
 * asked only about the commits after it.
 */
export class ShareContinuity {
  private readonly known = new Map<string, Known>();

  async unbroken(gitdir: string, link: ShareLink, commit: string): Promise<boolean> {
    const known = this.known.get(link.id);
    if (known !== undefined && (!known.unbroken || known.commit === commit)) return known.unbroken;
    const from =
      known !== undefined ? { after: known.commit } : link.commit === undefined ? { since: link.created } : { after: link.commit };
    const paths = pathsOfResource(link.diagram, 'diagram');
    let unbroken = true;
    for (let before: string | undefined; ; ) {
      const entries = await readHistory(gitdir, { tip: commit, before, ...from, paths, limit: PAGE });
      if (entries.some((entry) => entry.resources.some((r) => r.id === link.diagram && r.action === 'delete'))) {
        unbroken = false;
        break;
      }
      if (entries.length < PAGE) break;
      before = entries[entries.length - 1]!.id;
    }
    if (this.known.size >= MAX_KNOWN) this.known.clear();
    this.known.set(link.id, { commit, unbroken });
    return unbroken;
  }
}
