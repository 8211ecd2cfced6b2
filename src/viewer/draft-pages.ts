/**
 * The viewer's draft pages (CONTRACT §8): the list of drafts, and one draft for review — its
 * title, description and author, its changes in words, every diagram it changes as as-is /
 * changes / to-be on the draft's layout (one it deletes: as main had it, everything on it marked
 * removed, and said deleted), its conflicts with a choice each, and for editors the
 * merge and close buttons. Pure functions of their inputs; plain forms, no script: the three
 * modes are radio buttons and CSS.
 */
import type { DraftDetails, DraftSummary } from '../drafts/drafts.js';
import { type VisualDiff, visualDiff } from '../drafts/visual-diff.js';
import { describeChanges } from '../drafts/words.js';
import { drawingOf } from '../drawing/drawings.js';
import { clip } from '../drawing/text.js';
import { bdi, esc, escExact } from '../escape.js';
import type { Diagram, Model } from '../model/types.js';
import { diagramPath, layout, type PageContext } from './pages.js';

export function draftsPath(slug: string, name?: string): string {
  return `/orgs/${encodeURIComponent(slug)}/drafts${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
}

/** Diagrams drawn on one draft page; more are named in the changes but not drawn. */
const MAX_DRAWN_DIAGRAMS = 20;

const STYLE = `<style>
.drafts td,.drafts th{padding:.25rem .6rem;text-align:left}
.draft-meta{color:#627d98}
.changes li{margin:.15rem 0}
.diff-figure{background:#fff;border:1px solid #d9e2ec;border-radius:6px;padding:.5rem 1rem;margin:1rem 0}
.diff-figure .modes{display:flex;gap:.75rem;margin:.25rem 0 .5rem}
.diff-figure .modes input{position:absolute;opacity:0}
.diff-figure .modes label{padding:.2rem .7rem;border:1px solid #2f5d8a;border-radius:4px;cursor:pointer}
.diff-figure .panel{display:none;overflow:auto}
.diff-figure:has(input[value=as-is]:checked) .panel.as-is,
.diff-figure:has(input[value=changes]:checked) .panel.changes,
.diff-figure:has(input[value=to-be]:checked) .panel.to-be{display:block}
.diff-figure:has(input[value=as-is]:checked) label.as-is,
.diff-figure:has(input[value=changes]:checked) label.changes,
.diff-figure:has(input[value=to-be]:checked) label.to-be{background:#2f5d8a;color:#fff}
.conflicts td,.conflicts th{padding:.3rem .6rem;vertical-align:top;text-align:left;border-top:1px solid #d9e2ec}
.conflicts code{white-space:pre-wrap}
.draft-actions{display:flex;gap:1rem;margin:1rem 0}
.draft-actions button{padding:.4rem 1rem}
.legend span{margin-right:1rem}
.deleted-mark{font-size:.8em;font-weight:normal;color:#fff;background:#c0392b;border-radius:3px;padding:.05rem .4rem;vertical-align:middle}
.legend .added{color:#1f8a4c}.legend .removed{color:#c0392b}.legend .changed{color:#c77700}.marks-in-words{font-size:.9em}
</style>`;

export function draftListPage(
  drafts: { open: DraftSummary[]; merged: DraftSummary[]; closed: DraftSummary[] },
  context: PageContext & { slug: string },
): string {
  const table = (list: DraftSummary[]) =>
    list.length === 0
      ? '<p>None.</p>'
      : '<table class="drafts"><thead><tr><th>Draft</th><th>Title</th><th>Author</th><th>Opened</th></tr></thead><tbody>' +
        list
          .map(
            (d) =>
              `<tr><td><a href="${esc(draftsPath(context.slug, d.name))}">${esc(d.name)}</a></td><td>${bdi(d.title)}</td>` +
              `<td>${bdi(d.author)}</td><td>${esc(d.created)}</td></tr>`,
          )
          .join('') +
        '</tbody></table>';
  const body =
    `${STYLE}<h1>Drafts</h1><p>Proposed changes to the model, each the git branch <code>drafts/&lt;name&gt;</code>; none touches main until it is merged.</p>` +
    `<h2>Open</h2>${table(drafts.open)}<h2>Merged</h2>${table(drafts.merged)}<h2>Closed</h2>${table(drafts.closed)}`;
  return layout('Drafts', context, body);
}

function value(v: unknown): string {
  if (v === null || v === undefined) return '<em>(none)</em>';
  return `<code>${bdi(typeof v === 'string' ? v : JSON.stringify(v, null, 1))}</code>`;
}

/** Why a merge from this page was not made, said on the page it came back to (`?refused=`). */
export const MERGE_REFUSALS = {
  changed: 'The draft changed since you loaded this page: nothing was merged. Review its changes as they are now, then merge.',
  conflicts:
    'main changed meanwhile, and the draft now conflicts with it: nothing was merged. Choose what to keep for each conflict below, then merge.',
} as const;
export type MergeRefusal = keyof typeof MERGE_REFUSALS;

/**
 * What the marks of a visual diff mark, in words: the drawing's colours and fading say it to the
 * eye alone (a screen reader reads the drawing as one image, and some readers cannot tell the colours).
 */
function marksInWords(drawn: VisualDiff, first?: string): string {
  const names = new Map<string, string>();
  for (const i of drawn.diagram.componentInstances) {
    const component = i.component === null ? undefined : drawn.model.components.get(i.component);
    names.set(i.id, `box ${bdi(clip(component?.name ?? (i.placeholder || 'placeholder')))}`);
  }
  for (const r of drawn.diagram.relations) names.set(r.id, r.label?.trim() ? `relation ${bdi(clip(r.label))}` : 'relation');
  for (const a of drawn.diagram.textareas) names.set(a.id, 'text area');
  const sentences = (['added', 'removed', 'changed'] as const).flatMap((mark) => {
    const marked = [...drawn.marks].filter(([, m]) => m === mark).map(([id]) => names.get(id) ?? esc(id));
    return marked.length === 0 ? [] : [`${mark[0]!.toUpperCase()}${mark.slice(1)}: ${marked.join(', ')}.`];
  });
  return `<p class="marks-in-words">${[...(first === undefined ? [] : [esc(first)]), ...sentences].join(' ')}</p>`;
}

export async function draftPage(
  review: { details: DraftDetails; before: Model; after: Model },
  context: PageContext & { slug: string; refused?: MergeRefusal },
): Promise<string> {
  const { details, before, after } = review;
  const editor = context.key?.role === 'editor' && details.state === 'open';
  // A merged draft shows what its merge brought into main (Drafts.get), not its head against itself.
  const merged = details.state === 'merged';
  // HTML: each name in the sentences isolated, the rest escaped.
  const words = describeChanges(details.changes, { text: esc, name: bdi });
  // Every diagram the draft changes or adds, then every one it deletes (drawn as main had it,
  // every element marked removed): at most MAX_DRAWN_DIAGRAMS in all.
  const compared: Array<{ previous: Diagram | undefined; diagram: Diagram | undefined }> = [
    ...[...after.diagrams.values()].map((diagram) => ({ previous: before.diagrams.get(diagram.id), diagram })),
    ...[...before.diagrams.values()].filter((was) => !after.diagrams.has(was.id)).map((was) => ({ previous: was, diagram: undefined })),
  ];
  const figures: string[] = [];
  for (const { previous, diagram } of compared) {
    if (figures.length === MAX_DRAWN_DIAGRAMS) break;
    const drawn = diagram
      ? visualDiff({ diagram: previous, model: before }, { diagram, model: after })
      : visualDiff({ diagram: previous!, model: before }, { diagram: undefined, model: after });
    // A diagram the draft deletes is shown even with nothing on it: its deletion is the change.
    if (drawn.marks.size === 0 && diagram) continue;
    const shown = (diagram ?? previous)!;
    const group = `mode-${shown.id}`;
    const mode = (name: string, label: string, checked: boolean) =>
      `<label class="${name}"><input type="radio" name="${esc(group)}" value="${name}"${checked ? ' checked' : ''}>${label}</label>`;
    const [asIs, changes, toBe] = await Promise.all([
      previous ? drawingOf(previous, before) : null,
      drawingOf(drawn.diagram, drawn.model, { marks: drawn.marks }),
      diagram ? drawingOf(diagram, after) : null,
    ]);
    // A deleted diagram has no page in the draft: its name links to it as main had it where the draft began.
    const heading = diagram
      ? `<a href="${esc(diagramPath(context.slug, shown.id))}?draft=${esc(encodeURIComponent(details.name))}">${bdi(shown.name)}</a>`
      : `<a href="${esc(diagramPath(context.slug, shown.id))}?at=${esc(details.changes.from)}">${bdi(shown.name)}</a> <span class="deleted-mark">deleted</span>`;
    const deletion = merged ? 'Its merge deleted this diagram from main' : 'The draft deletes this diagram';
    figures.push(
      `<section class="diff-figure${diagram ? '' : ' deleted'}" data-diagram="${esc(shown.id)}"><h3>${heading}</h3>` +
        `<div class="modes" role="radiogroup" aria-label="Show">${mode('as-is', 'As-is', false)}${mode('changes', 'Changes', true)}${mode('to-be', 'To-be', false)}</div>` +
        `<div class="panel as-is">${asIs ?? '<p>Not in main: the draft adds this diagram.</p>'}</div>` +
        `<div class="panel changes">${changes}${marksInWords(drawn, diagram ? undefined : `${deletion}: everything on it is marked removed.`)}` +
        '<p class="legend"><span class="added">■ added</span><span class="removed">■ removed</span><span class="changed">■ changed</span></p></div>' +
        `<div class="panel to-be">${toBe ?? `<p>Not in the draft: ${merged ? 'its merge deleted' : 'the draft deletes'} this diagram.</p>`}</div></section>`,
    );
  }
  const conflicts =
    details.conflicts.length === 0
      ? ''
      : `<h2>Conflicts</h2><p>main and this draft changed these differently since the draft began. Choose which to keep for each.</p>` +
        '<table class="conflicts"><thead><tr><th>What</th><th>Base</th><th>main</th><th>Draft</th><th>Keep</th></tr></thead><tbody>' +
        details.conflicts
          .map((c, n) => {
            const field = `take:${c.kind}:${c.id}:${c.field}`;
            const choice = (side: 'main' | 'draft') =>
              // Neither is chosen for the reviewer: a merge waits for a choice on each (required).
              `<label><input type="radio" form="merge-form" name="${escExact(field)}" value="${side}" required aria-label="Keep ${side} for ${esc(c.name ?? c.id)} ${esc(c.field)}"> ${side}</label>`;
            return (
              `<tr data-conflict="${n}"><td>${esc(c.kind)} ${bdi(c.name ?? c.id)}: <code>${esc(c.field)}</code></td>` +
              `<td>${value(c.base)}</td><td>${value(c.main)}</td><td>${value(c.draft)}</td><td>${editor ? `${choice('main')} ${choice('draft')}` : ''}</td></tr>`
            );
          })
          .join('') +
        '</tbody></table>';
  const actions = editor
    ? '<div class="draft-actions">' +
      // The head reviewed here: a merge of anything the page did not show is refused.
      `<form id="merge-form" method="post" action="${esc(draftsPath(context.slug, details.name))}/merge"><input type="hidden" name="head" value="${escExact(details.head)}"><button type="submit">Merge into main</button></form>` +
      `<form method="post" action="${esc(draftsPath(context.slug, details.name))}/close"><button type="submit">Close draft</button></form></div>`
    : '';
  const problem =
    details.problem === undefined ? '' : `<p class="problem" role="alert">A merge now would be refused: ${bdi(details.problem)}</p>`;
  const refused = context.refused === undefined ? '' : `<p class="problem" role="alert">${esc(MERGE_REFUSALS[context.refused])}</p>`;
  const body =
    `${STYLE}<p><a href="${esc(draftsPath(context.slug))}">← Drafts</a></p>${refused}` +
    `<h1>${bdi(details.title)}</h1>` +
    `<p class="draft-meta">Draft <code>${esc(details.name)}</code> · <span class="draft-state">${esc(details.state)}</span> · by ${bdi(details.author || 'unknown')}` +
    `${details.created ? ` · opened ${esc(details.created)}` : ''}` +
    (merged
      ? `${details.mergedAt ? ` · merged ${esc(details.mergedAt)}` : ''} · ${details.behind} commit${details.behind === 1 ? '' : 's'} of main between its start and its merge</p>`
      : ` · ${details.behind} commit${details.behind === 1 ? '' : 's'} of main since it began</p>`) +
    (details.desc ? `<p class="draft-desc">${bdi(details.desc)}</p>` : '') +
    (merged ? '<h2>What its merge brought into main</h2>' : '<h2>Changes</h2>') +
    (words.length === 0
      ? `<p>${merged ? 'Nothing: main already held its head.' : 'No changes yet.'}</p>`
      : `<ul class="changes">${words.map((w) => `<li>${w}</li>`).join('')}</ul>`) +
    figures.join('') +
    conflicts +
    problem +
    actions;
  return layout(details.title, context, body);
}
