import { pathsOfResource, readHistory } from '../history/log.js';
import type { ShareLink } from './links.js';

/** Answers kept (a link and a commit of main each); past this many, forgotten all at once. */
const MAX_KNOWN = 10_000;
/** More changes of one diagram than this since its link was made are read no further. */
const MAX_CHANGES = 1_000;

/**
 * A share link opens the diagram it was made for, not a later one under the same id: a
 * pipeline that deletes a diagram and makes another with that (client-chosen) id must not
 * publish the new one through the old link. Whether the diagram was deleted on main since the
 * link was made is main's history's answer (its first-parent chain, docs/api.md §7.2), asked
 * once per link and commit of main.
 */
export class ShareContinuity {
  private readonly known = new Map<string, boolean>();

  async unbroken(gitdir: string, link: ShareLink, commit: string): Promise<boolean> {
    const key = `${link.id}@${commit}`;
    const known = this.known.get(key);
    if (known !== undefined) return known;
    const entries = await readHistory(gitdir, {
      tip: commit,
      ...(link.commit === undefined ? { since: link.created } : { after: link.commit }),
      paths: pathsOfResource(link.diagram, 'diagram'),
      limit: MAX_CHANGES,
    });
    const unbroken = !entries.some((entry) => entry.resources.some((r) => r.id === link.diagram && r.action === 'delete'));
    if (this.known.size >= MAX_KNOWN) this.known.clear();
    this.known.set(key, unbroken);
    return unbroken;
  }
}
