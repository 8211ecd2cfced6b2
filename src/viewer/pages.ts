import type { HistoryEntry } from '../history/log.js';
/**
 * The viewer's HTML pages, rendered on the server from one snapshot of the model. Pure
 * functions of their inputs: no request, no I/O.
 */
import { LEVELS, type Component, type Diagram, type Model, type Tag } from '../model/types.js';
import type { KeyRecord } from '../store/keys.js';
import { expired, type ShareLink } from '../share/links.js';
import { MAX_EXPIRY_DAYS } from '../share/schemas.js';
import { bdi, esc, escExact } from '../escape.js';
import { drawingOf } from '../drawing/drawings.js';
import { diagramSegment } from '../model/present.js';

export interface PageContext {
  /** The signed-in key, or none on the sign-in page. */
  key?: KeyRecord;
  /** The organization's slug in urls. */
  slug?: string;
}

/** The tab's icon, in the page itself: a browser asks /favicon.ico otherwise, and logs its 404 on every page. */
const FAVICON =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Crect width='16' height='16' rx='3' fill='%231168bd'/%3E%3Crect x='3' y='4' width='10' height='8' rx='1' fill='none' stroke='white' stroke-width='1.5'/%3E%3C/svg%3E";

/** The index lists at most this many components; the search finds the rest. */
const MAX_LISTED_COMPONENTS = 500;

export const ASSETS = { css: '/viewer/viewer.css', js: '/viewer/viewer.js', live: '/viewer/live.js' };

export function diagramPath(slug: string, id: string): string {
  return `/orgs/${encodeURIComponent(slug)}/diagrams/${diagramSegment(id)}`;
}

export function componentPath(slug: string, id: string): string {
  return `/orgs/${encodeURIComponent(slug)}/components/${encodeURIComponent(id)}`;
}

/** The notice on a component the API updated; `shown` writes its `apiContext` (the client's words): `bdi` in a page's flow. */
export function apiNotice(component: Component, shown: (words: string) => string = String): string {
  return `Updated through the API (${shown(String(component.apiContext))}): later API updates may overwrite changes made here`;
}

export function layout(title: string, context: PageContext, body: string, script = false): string {
  // Signed-in pages follow the model as it changes (static/live.js).
  const live = context.key !== undefined && context.slug !== undefined;
  const account = context.key
    ? `<a class="nav-drafts" href="/orgs/${encodeURIComponent(context.key.org)}/drafts" style="color:#fff">Drafts</a>` +
      `<span class="who">${bdi(context.key.label)} · ${esc(context.key.org)} · ${context.key.role === 'editor' ? 'can arrange' : 'read only'}</span>` +
      '<form method="post" action="/sign-out" class="sign-out"><button type="submit">Sign out</button></form>'
    : '';
  return (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${esc(title)} · c4store</title><link rel="stylesheet" href="${ASSETS.css}"><link rel="icon" href="${FAVICON}">` +
    (script ? `<script src="${ASSETS.js}" defer></script>` : '') +
    (live ? `<script src="${ASSETS.live}" defer></script>` : '') +
    `</head><body${live ? ` data-events="/orgs/${esc(encodeURIComponent(context.slug!))}/events"` : ''}><header class="top"><a class="home" href="/">c4store</a>${account}</header>` +
    `<main>${body}</main></body></html>\n`
  );
}

function tagChips(tags: readonly Tag[]): string {
  if (tags.length === 0) return '';
  return `<ul class="tags">${tags.map((t) => `<li class="tag tag-${esc(t.color)}">${bdi(t.name)}</li>`).join('')}</ul>`;
}

function tagsOf(diagram: Diagram, model: Model): Tag[] {
  return diagram.tags.map((id) => model.tags.get(id)).filter((t): t is Tag => t !== undefined);
}

function typeName(component: Component, model: Model): string {
  return component.typeId === null ? 'no type' : (model.types.get(component.typeId)?.name ?? 'no type');
}

function stateBadge(state: string): string {
  return `<span class="state state-${esc(state.toLowerCase())}">${esc(state)}</span>`;
}

/**
 * A diagram's small picture: its PNG at a quarter of its size (drawn on a worker and kept with
 * the snapshot, src/viewer/svg-response.ts), loaded only when scrolled into view. The name
 * beside it is the link a screen reader or keyboard uses; the picture is one for the mouse.
 */
function thumbnail(path: string): string {
  return (
    `<a href="${esc(path)}" tabindex="-1" aria-hidden="true">` +
    `<img src="${esc(path)}.png?scale=${THUMBNAIL_SCALE}" alt="" loading="lazy" decoding="async" width="160" height="100"></a>`
  );
}

const THUMBNAIL_SCALE = 0.25;

/** `GET /`: the organization's diagrams by level, and its components with a search box. */
export function indexPage(model: Model, context: PageContext & { slug: string }, query: string): string {
  const sections = LEVELS.map((level) => {
    const diagrams = [...model.diagrams.values()].filter((d) => d.level === level);
    if (diagrams.length === 0) return '';
    const rows = diagrams
      .map(
        (d) =>
          `<tr><td class="thumb">${thumbnail(diagramPath(context.slug, d.id))}</td>` +
          `<td><a href="${esc(diagramPath(context.slug, d.id))}">${bdi(d.name)}</a></td><td>${stateBadge(d.state)}</td>` +
          `<td>${tagChips(tagsOf(d, model))}</td><td class="num">${d.componentInstances.length}</td></tr>`,
      )
      .join('');
    return (
      `<section class="level"><h3>${level}</h3><table><thead><tr><th><span class="visually-hidden">Picture</span></th><th>Diagram</th><th>State</th><th>Tags</th>` +
      `<th class="num">Boxes</th></tr></thead><tbody>${rows}</tbody></table></section>`
    );
  }).join('');
  const needle = query.trim().toLowerCase();
  const components = [...model.components.values()].filter(
    (c) => needle === '' || `${c.name}\n${c.desc ?? ''}\n${typeName(c, model)}`.toLowerCase().includes(needle),
  );
  const shown = components.slice(0, MAX_LISTED_COMPONENTS);
  const rows = shown
    .map(
      (c) =>
        `<tr><td><a href="${esc(componentPath(context.slug, c.id))}">${bdi(c.name)}</a>` +
        `${c.apiContext === undefined ? '' : ` <span class="api-badge" title="${esc(apiNotice(c))}">API</span>`}</td>` +
        `<td>${bdi(typeName(c, model))}</td><td>${stateBadge(c.state)}</td></tr>`,
    )
    .join('');
  const body =
    `<h1>${bdi(model.organization.name)}</h1>` +
    `<h2>Diagrams</h2>${sections || '<p>No diagrams yet.</p>'}` +
    '<h2 id="components">Components</h2>' +
    `<form method="get" action="/#components" class="search" role="search"><label for="q">Search components</label> ` +
    `<input type="search" id="q" name="q" value="${escExact(query)}" placeholder="name, description or type"> <button type="submit">Search</button></form>` +
    (components.length === 0
      ? '<p>No component matches.</p>'
      : `<table class="components"><thead><tr><th>Component</th><th>Type</th><th>State</th></tr></thead><tbody>${rows}</tbody></table>`) +
    (shown.length < components.length
      ? `<p class="more">The first ${shown.length} of ${components.length} components; search to find the others.</p>`
      : '');
  return layout(model.organization.name, context, body);
}

function attributeValue(value: unknown, type: string | undefined): string {
  if (value === null || value === '') return '<span class="none">—</span>';
  if (type === 'LINK' && typeof value === 'string' && /^https?:\/\//i.test(value)) {
    return `<a href="${escExact(value)}" rel="noopener noreferrer">${bdi(value)}</a>`;
  }
  if (type === 'USERLIST' && typeof value === 'string') {
    return `<span class="person">${bdi(value)}</span> <a href="mailto:${escExact(value)}">(e-mail)</a>`;
  }
  return bdi(String(value));
}

const appearances = new WeakMap<ReadonlyMap<string, Diagram>, Map<string, Diagram[]>>();

/**
 * The diagrams that show a component, in the model's order. One pass over every instance of
 * every diagram, once per snapshot (a snapshot's maps never change): a diagram page with a panel
 * per box then costs its boxes' appearances, not boxes × every instance of the organization.
 */
export function diagramsShowing(model: Model, componentId: string): readonly Diagram[] {
  let index = appearances.get(model.diagrams);
  if (!index) {
    index = new Map();
    for (const diagram of model.diagrams.values()) {
      for (const instance of diagram.componentInstances) {
        if (instance.component === null) continue;
        const list = index.get(instance.component);
        if (!list) index.set(instance.component, [diagram]);
        else if (list[list.length - 1] !== diagram) list.push(diagram);
      }
    }
    appearances.set(model.diagrams, index);
  }
  return index.get(componentId) ?? [];
}

/**
 * The details of one component: on the diagram page as a panel, and as a page of its own.
 * `shared` (a share link's page): only what belongs to the diagram shown, its name, type,
 * state and description; no attributes and no other diagram, not even their names.
 */
export function componentDetails(component: Component, model: Model, slug: string, headingLevel: 1 | 2 = 2, shared = false): string {
  const heading = `<h${headingLevel}>${bdi(component.name)}</h${headingLevel}>`;
  const facts =
    `<p class="meta">${bdi(typeName(component, model))} · ${stateBadge(component.state)}</p>` +
    (component.desc ? `<p class="desc">${bdi(component.desc)}</p>` : '<p class="desc none">No description.</p>');
  if (shared) return heading + facts;
  const attributes = component.attributes
    .map((v) => {
      const attribute = model.attributes.get(v.id);
      return `<dt>${bdi(attribute?.name ?? v.id)}</dt><dd>${attributeValue(v.value, attribute?.type)}</dd>`;
    })
    .join('');
  const diagrams = diagramsShowing(model, component.id);
  const notice = component.apiContext === undefined ? '' : `<p class="api-notice" role="note">${apiNotice(component, bdi)}</p>`;
  return (
    heading +
    notice +
    facts +
    (attributes === '' ? '' : `<h${headingLevel + 1}>Attributes</h${headingLevel + 1}><dl class="attributes">${attributes}</dl>`) +
    `<h${headingLevel + 1}>Appears on</h${headingLevel + 1}>` +
    (diagrams.length === 0
      ? '<p class="none">No diagram.</p>'
      : `<ul class="appears">${diagrams.map((d) => `<li><a href="${esc(diagramPath(slug, d.id))}">${bdi(d.name)}</a> (${d.level})</li>`).join('')}</ul>`)
  );
}

/**
 * Name and description, edited in the panel; saved as one commit (src/viewer/edit.ts). `ofDraft`:
 * `?draft=<name>` when the page shows a draft, whose branch the edit then goes to.
 */
function editForm(component: Component, slug: string, commit: string, back: string, ofDraft = ''): string {
  const id = esc(component.id);
  return (
    `<details class="edit"><summary>Edit name and description</summary>` +
    `<form class="edit-form" method="post" action="${esc(`${componentPath(slug, component.id)}/edit${ofDraft}`)}">` +
    // The fields' exact text: the form saves what it was given, every character of it.
    `<input type="hidden" name="commit" value="${escExact(commit)}"><input type="hidden" name="next" value="${escExact(back)}">` +
    `<label for="name-${id}">Name</label><input id="name-${id}" name="name" required value="${escExact(component.name)}">` +
    `<label for="desc-${id}">Description</label><textarea id="desc-${id}" name="desc" rows="4">${escExact(component.desc ?? '')}</textarea>` +
    '<button type="submit">Save</button></form></details>'
  );
}

export function componentPage(component: Component, model: Model, context: PageContext & { slug: string }): string {
  return layout(
    component.name,
    context,
    `<article class="component-page">${componentDetails(component, model, context.slug, 1)}</article>`,
  );
}

export interface DiagramView {
  commit: string;
  /** `?at=<commit>`: the diagram as it was; nothing can be moved. */
  at?: string;
  /**
   * `?draft=<name>`: the diagram as the draft has it. Drops and edits go to the draft's branch
   * (their addresses carry `?draft=`); a merged or closed draft's page takes none.
   */
  draft?: { name: string; state: 'open' | 'merged' | 'closed' };
  /** The diagram's share links, for an editor's page (made and revoked there), and the token its form makes the next one with. */
  shareLinks?: { links: readonly ShareLink[]; token: string };
}

/** What the make form offers for a link's lifetime, in days (the API takes any from 1 to MAX_EXPIRY_DAYS), or none: until revoked. */
const EXPIRY_CHOICES = ['never', 1, 7, 30, 90, MAX_EXPIRY_DAYS] as const;

function daysText(days: (typeof EXPIRY_CHOICES)[number]): string {
  return days === 'never' ? 'never (until revoked)' : days === 1 ? '1 day' : `${days} days`;
}

/** An ISO time as the page shows it, to the second (UTC). */
function timeOf(iso: string): string {
  return `<time datetime="${esc(iso)}">${esc(iso.slice(0, 19).replace('T', ' '))}</time>`;
}

/** When the link ends: `expires <time>`, `expired <time>`, or that it never does by itself (made without a lifetime). */
function expiryOf(link: ShareLink, now: number): string {
  if (link.expires === undefined) return '<span class="expiry">never expires</span>';
  return expired(link, now)
    ? `<span class="expiry expired">expired ${timeOf(link.expires)}</span>`
    : `<span class="expiry">expires ${timeOf(link.expires)}</span>`;
}

/** An editor's list of the diagram's share links, a revoke button each, and the form making one. */
function shareSection(path: string, slug: string, { links, token }: { links: readonly ShareLink[]; token: string }): string {
  const now = Date.now();
  const rows = links
    .map(
      (link) =>
        `<li><span class="label">${link.label === '' ? '<span class="none">no label</span>' : bdi(link.label)}</span> · ` +
        // To the second, and its id (the API's): two links of one label are told apart, and so is which one a button revokes.
        `made ${timeOf(link.created)} by ${bdi(link.createdBy)} · ${expiryOf(link, now)} ` +
        `· <code>${esc(link.id)}</code> ` +
        `<form method="post" action="/orgs/${esc(encodeURIComponent(slug))}/share-links/${esc(link.id)}/revoke" class="revoke">` +
        `<input type="hidden" name="next" value="${escExact(path)}#share"><button type="submit" aria-label="Revoke the link ${esc(link.id)}${link.label === '' ? '' : ` (${esc(link.label)})`}">Revoke</button></form></li>`,
    )
    .join('');
  return (
    `<details class="share" id="share"${links.length > 0 ? ' open' : ''}><summary>Share links (${links.length})</summary>` +
    '<p class="hint">A share link shows this diagram as it is now, read only, to anyone who has the link, without signing in: ' +
    'for a wiki, a README or Backstage. Given a lifetime, it ends by itself when that is over; revoked, it stops working at once.</p>' +
    (rows === '' ? '' : `<ul class="share-links">${rows}</ul>`) +
    // The new link's token, drawn with the page: the form sent again shows the link it made again (routes.ts).
    `<form method="post" action="${esc(path)}/share-links" class="make-share"><input type="hidden" name="token" value="${esc(token)}">` +
    '<label for="share-label">Where it will be used</label> ' +
    '<input id="share-label" name="label" maxlength="200" placeholder="README, Confluence: Payments…"> ' +
    `<label for="share-expiry">Ends after</label> <select id="share-expiry" name="expiresInDays">${EXPIRY_CHOICES.map(
      (days) => `<option value="${days}"${days === 'never' ? ' selected' : ''}>${daysText(days)}</option>`,
    ).join('')}</select> <button type="submit">Make a share link</button></form></details>`
  );
}

/** The one page that shows a new link's addresses (only their hash is kept), with snippets to paste. */
export function shareMadePage(
  diagram: Diagram,
  link: ShareLink,
  urls: { url: string; svgUrl: string; pngUrl: string },
  context: PageContext & { slug: string; key: KeyRecord },
): string {
  const field = (id: string, label: string, value: string) =>
    `<label for="${id}">${label}</label><input id="${id}" readonly value="${escExact(value)}">`;
  const body =
    `<section class="share-made"><h1>Share link to ${bdi(diagram.name)}</h1>` +
    '<p>Copy the addresses now: they are shown only this once. Anyone who has them sees this diagram, read only, ' +
    `until the link ${link.expires === undefined ? 'is revoked' : `is revoked or ${expiryOf(link, Date.now())}`}.</p>` +
    `<div class="fields">${field('share-url', 'The page', urls.url)}${field('share-svg', 'The drawing (SVG)', urls.svgUrl)}${field('share-png', 'The drawing (PNG)', urls.pngUrl)}` +
    field('share-markdown', 'Markdown', `[![${diagram.name}](${urls.svgUrl})](${urls.url})`) +
    field('share-iframe', 'Frame (Confluence, Backstage)', `<iframe src="${urls.url}" width="100%" height="700"></iframe>`) +
    `</div><p><a href="${esc(diagramPath(context.slug, diagram.id))}#share">Back to the diagram</a></p></section>`;
  return layout(`Share link to ${diagram.name}`, context, body);
}

/** The panel of each component on the diagram, opened by clicking its box (`#c-<id>`). */
function panelsOf(diagram: Diagram, model: Model, details: (c: Component) => string): string {
  const componentIds = [...new Set(diagram.componentInstances.map((i) => i.component).filter((c): c is string => c !== null))];
  return componentIds
    .map((id) => model.components.get(id))
    .filter((c): c is Component => c !== undefined)
    .map(
      (c) =>
        `<section class="panel" id="c-${esc(c.id)}" tabindex="-1" aria-label="${esc(c.name)}">` +
        `<a class="close" href="#" aria-label="Close details of ${esc(c.name)}">×</a>${details(c)}</section>`,
    )
    .join('');
}

/** The diagram's name, level, state, tags and description. */
function diagramHeading(diagram: Diagram, model: Model): string {
  return (
    `<h1>${bdi(diagram.name)}</h1>` +
    `<p class="meta"><span class="level">Level ${esc(diagram.level)}</span> · ${stateBadge(diagram.state)} ${tagChips(tagsOf(diagram, model))}</p>`
  );
}

/** Which draft a diagram page shows, where its changes go, and a way to the draft's own page. */
function draftBanner(draft: NonNullable<DiagramView['draft']>, slug: string, path: string): string {
  const name = esc(draft.name);
  const page = `/orgs/${encodeURIComponent(slug)}/drafts/${encodeURIComponent(draft.name)}`;
  const state =
    draft.state === 'open'
      ? ': changes made here go into the draft, not main.'
      : draft.state === 'merged'
        ? ' is merged: read only. Open a new draft for further changes.'
        : ' is closed: read only. Reopen it to change it.';
  return (
    `<p class="draft-banner" data-draft="${name}" data-state="${esc(draft.state)}">Draft <a href="${esc(page)}"><code>${name}</code></a>${state} ` +
    `<a href="${esc(path)}">Show main's diagram</a>.</p>`
  );
}

/** The diagram page: the drawing, its facts, and a panel per component opened by clicking its box. */
export async function diagramPage(
  diagram: Diagram,
  model: Model,
  context: PageContext & { slug: string; key: KeyRecord },
  view: DiagramView,
): Promise<string> {
  const draft = view.at === undefined ? view.draft : undefined;
  const editable = context.key.role === 'editor' && view.at === undefined && (draft === undefined || draft.state === 'open');
  const svg = await drawingOf(diagram, model, { componentHref: '#c-', editable });
  const path = diagramPath(context.slug, diagram.id);
  // Where this page's writes go and its links lead: the draft it shows, else main.
  const ofDraft = draft === undefined ? '' : `?draft=${encodeURIComponent(draft.name)}`;
  const panels = panelsOf(
    diagram,
    model,
    (c) =>
      componentDetails(c, model, context.slug) +
      (editable ? editForm(c, context.slug, view.commit, `${path}${ofDraft}#c-${c.id}`, ofDraft) : ''),
  );
  const asOf = view.at === undefined ? ofDraft : `?at=${encodeURIComponent(view.at)}`;
  const body =
    `<article class="diagram-page" data-commit="${esc(view.commit)}" data-arrange-url="${esc(`${path}/arrange${ofDraft}`)}" data-editable="${editable}">` +
    diagramHeading(diagram, model) +
    (draft === undefined ? '' : draftBanner(draft, context.slug, path)) +
    (view.at === undefined
      ? ''
      : `<p class="history">As of commit <code>${esc(view.at)}</code>. <a href="${esc(path)}">Show the current diagram</a>.</p>`) +
    (diagram.desc ? `<p class="desc">${bdi(diagram.desc)}</p>` : '') +
    `<div id="notice" class="notice" role="alert" hidden></div>` +
    (editable
      ? `<p class="hint">Drag a box or text area to move it, its bottom-right corner to resize it; drop a box into a container to put it there. ` +
        `With the keyboard: on a box or text area, arrow keys move it and Shift+arrows resize it, Enter saves, Escape puts it back. ` +
        `Each drop is saved as one commit${draft === undefined ? '' : ' on the draft'}.</p>`
      : '') +
    `<div class="layout"><div class="canvas">${svg}</div><aside class="panels">${panels}</aside></div>` +
    `<p class="links">The drawing as <a href="${esc(`${path}.svg${asOf}`)}">SVG</a> or <a href="${esc(`${path}.png${asOf}`)}">PNG</a> · <a href="${esc(`${path}/history${ofDraft}`)}">History of this diagram${draft === undefined ? '' : ' in the draft'}</a></p>` +
    // Share links show main's diagram: made from main's page only.
    (editable && draft === undefined && view.shareLinks ? shareSection(path, context.slug, view.shareLinks) : '') +
    '</article>';
  return layout(diagram.name, context, body, true);
}

/**
 * A share link's page (`sharePath`: `/share/<token>`): the diagram as it is now, read only, with
 * nothing that leads elsewhere in the organization — no other diagram, no attributes, no history.
 */
export async function sharedDiagramPage(diagram: Diagram, model: Model, sharePath: string): Promise<string> {
  const svg = await drawingOf(diagram, model, { componentHref: '#c-', shared: true });
  const panels = panelsOf(diagram, model, (c) => componentDetails(c, model, '', 2, true));
  const body =
    `<article class="diagram-page shared" data-editable="false">` +
    diagramHeading(diagram, model) +
    (diagram.desc ? `<p class="desc">${bdi(diagram.desc)}</p>` : '') +
    `<div class="layout"><div class="canvas">${svg}</div><aside class="panels">${panels}</aside></div>` +
    `<p class="links">The drawing as <a href="${esc(`${sharePath}.svg`)}">SVG</a> or <a href="${esc(`${sharePath}.png`)}">PNG</a> · shared read only from ${bdi(model.organization.name)}</p></article>`;
  return layout(diagram.name, {}, body, true);
}

/** The commits that changed a diagram, newest first, each a link to the diagram as it was then. */
export function diagramHistoryPage(
  diagram: { id: string; name: string },
  entries: readonly HistoryEntry[],
  context: PageContext & { slug: string; key: KeyRecord },
  /** A draft's history (its branch, main's commits before it began among them). */
  draft?: string,
): string {
  const path = diagramPath(context.slug, diagram.id);
  const ofDraft = draft === undefined ? '' : `?draft=${encodeURIComponent(draft)}`;
  const rows = entries
    .map((entry) => {
      const action = entry.resources.find((r) => r.id === diagram.id)?.action ?? 'update';
      return (
        `<tr><td><a href="${esc(path)}?at=${esc(entry.id)}"><code>${esc(entry.id.slice(0, 10))}</code></a></td>` +
        `<td><time datetime="${esc(entry.time)}">${esc(entry.time.replace('T', ' ').replace(/(Z|[+-]\d\d:\d\d)$/, ''))}</time></td>` +
        `<td>${bdi(entry.author.name)}</td><td>${esc(action)}</td><td>${bdi(entry.summary)}</td>` +
        `<td>${entry.apiContext === null ? '' : bdi(entry.apiContext)}</td></tr>`
      );
    })
    .join('');
  const body =
    `<section class="history-page"><h1>History of ${bdi(diagram.name)}${draft === undefined ? '' : ` in draft '${esc(draft)}'`}</h1>` +
    `<p><a href="${esc(`${path}${ofDraft}`)}">${draft === undefined ? 'The current diagram' : 'The diagram in the draft'}</a></p>` +
    '<table><thead><tr><th>Commit</th><th>Time (UTC)</th><th>Author</th><th>Change</th><th>Summary</th><th>apiContext</th></tr></thead>' +
    `<tbody>${rows}</tbody></table></section>`;
  return layout(`History of ${diagram.name}`, context, body);
}

/**
 * The page a link from another site lands on without the session cookie: it loads `path` again
 * at once, from this site (a meta refresh: no script), and links to it for a browser that does
 * not follow the refresh.
 */
export function comeAgainPage(path: string): string {
  const href = escExact(path);
  return layout('Opening', {}, `<meta http-equiv="refresh" content="0; url=${href}"><p>Opening <a href="${href}">the page</a>…</p>`);
}

/** `context`: a signed-in visitor's, when another organization's page asks for its key (the header stays theirs). */
export function signInPage(options: { next: string; message?: string; error?: string }, context: PageContext = {}): string {
  const body =
    '<section class="sign-in"><h1>Sign in</h1>' +
    (options.message ? `<p class="message">${esc(options.message)}</p>` : '') +
    (options.error ? `<p class="error" role="alert">${esc(options.error)}</p>` : '') +
    '<p>Paste an API key of your organization once. The key is not stored in your browser: the server answers with a session that ends after eight hours or when you sign out.</p>' +
    '<form method="post" action="/sign-in"><label for="key">API key</label> ' +
    '<input type="password" id="key" name="key" autocomplete="off" required size="50"> ' +
    `<input type="hidden" name="next" value="${escExact(options.next)}"><button type="submit">Sign in</button></form></section>`;
  return layout('Sign in', context, body);
}

export function errorPage(status: number, message: string, context: PageContext): string {
  return layout(
    `Error ${status}`,
    context,
    `<section class="error-page"><h1>${status}</h1><p>${esc(message)}</p><p><a href="/">All diagrams</a></p></section>`,
  );
}
