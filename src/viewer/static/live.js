// c4store viewer: pages follow the model as it changes. The page listens to its organization's
// change stream (server-sent events, with the session) and, when a change concerns what it
// shows, fetches itself again and swaps in the parts that changed: the drawing (keeping the
// canvas's scroll and the drawing's own size and style, i.e. the zoom), the component panels
// (with the API notice), the history table. A page of a past commit (?at=) never changes; a
// page of a draft's diagram (?draft=) follows the draft's branch. A page whose session ended
// (signed out elsewhere, expired, its key revoked) says that it no longer follows changes, with a
// link to sign in again and come back; so does a page whose resume point is gone (a draft's page
// whose draft was rewritten or removed), with links to the drafts and to the diagram on main, and a
// draft's page whose draft was merged or closed meanwhile (a merged or closed draft's page, which
// changes no more, listens to nothing); a stream refused on the way is tried again.

(() => {
  const url = document.body.dataset.events;
  if (!url || !window.EventSource || new URLSearchParams(location.search).has('at')) return;
  // A merged or closed draft's page: the draft changes no more (its banner says so).
  const banner = document.querySelector('p.draft-banner');
  if (banner && banner.dataset.state !== 'open') return;
  const path = location.pathname.split('/').map(decodeURIComponent);
  // /orgs/<slug>/diagrams/<id>[/history] or /orgs/<slug>/components/<id>
  const shownId = path[1] === 'orgs' && path.length >= 5 ? path[4] : null;
  let dragging = false;
  let running = false;
  let again = false;
  /** The newest change that concerns this page. */
  let latest = null;

  document.addEventListener('pointerdown', () => (dragging = true), true);
  document.addEventListener('pointerup', () => (dragging = false), true);
  document.addEventListener('pointercancel', () => (dragging = false), true);

  /** Whether a change may alter this page: its own resource, a component it shows, or anything shared. */
  function concerns(change) {
    if (shownId === null) return true;
    const shown = new Set([shownId, ...Array.from(document.querySelectorAll('.panel[id^="c-"]'), (p) => p.id.slice(2))]);
    return change.resources.some((r) => shown.has(r.id) || (r.kind !== 'component' && r.kind !== 'diagram'));
  }

  function swap(selector, fresh) {
    const old = document.querySelector(selector);
    const next = fresh.querySelector(selector);
    // Never under the hands of someone typing (the panel's edit form, the search box).
    if (old?.contains(document.activeElement) && document.activeElement.matches('input, textarea')) return;
    if (old && next) old.replaceWith(document.importNode(next, true));
  }

  function swapDrawing(fresh) {
    const canvas = document.querySelector('.canvas');
    const old = canvas?.querySelector('svg.c4-diagram');
    const next = fresh.querySelector('.canvas svg.c4-diagram');
    if (!old || !next) return;
    const svg = document.importNode(next, true);
    // The zoom is the drawing's size and style on this page (and the canvas's scroll), not the server's.
    for (const name of ['style', 'width', 'height']) {
      if (old.hasAttribute(name)) svg.setAttribute(name, old.getAttribute(name));
    }
    const { scrollLeft, scrollTop } = canvas;
    old.replaceWith(svg);
    canvas.scrollLeft = scrollLeft;
    canvas.scrollTop = scrollTop;
  }

  function markNewRows(before) {
    for (const row of document.querySelectorAll('.history-page tbody tr')) {
      if (!before.has(row.querySelector('code')?.textContent)) row.classList.add('live-new');
    }
  }

  async function refresh() {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      // Not under a drag or a move by the keyboard, nor while a drop is saved (viewer.js): its
      // answer may be this very change.
      const busy = () => dragging || document.querySelector('article.diagram-page[aria-busy="true"], .diagram-page [data-moving]') !== null;
      while (busy()) await new Promise((resolve) => setTimeout(resolve, 100));
      // The page's own drop: already drawn from the drop's answer.
      if (document.querySelector('article.diagram-page')?.dataset.commit === latest) return;
      const response = await fetch(location.href, { credentials: 'same-origin', redirect: 'manual', headers: { accept: 'text/html' } });
      // Sent to sign in: the session ended meanwhile (the sign-in page is nothing to swap in).
      if (response.type === 'opaqueredirect') {
        showEnded();
        return;
      }
      const notice = document.getElementById('notice');
      if (response.status === 404 && notice) {
        notice.textContent = 'This was deleted meanwhile.';
        notice.hidden = false;
        return;
      }
      if (!response.ok) return;
      const fresh = new DOMParser().parseFromString(await response.text(), 'text/html');
      const page = document.querySelector('article.diagram-page');
      const freshPage = fresh.querySelector('article.diagram-page');
      if (page && freshPage) {
        page.dataset.commit = freshPage.dataset.commit;
        for (const part of ['h1', 'p.meta', 'p.desc', 'aside.panels']) swap(`article.diagram-page ${part}`, fresh);
        swapDrawing(fresh);
      } else if (document.querySelector('.history-page')) {
        const before = new Set(Array.from(document.querySelectorAll('.history-page tbody code'), (c) => c.textContent));
        swap('.history-page tbody', fresh);
        markNewRows(before);
      } else {
        swap('main', fresh);
      }
      document.dispatchEvent(new CustomEvent('c4store:refreshed'));
    } finally {
      running = false;
      if (again) {
        again = false;
        void refresh();
      }
    }
  }

  // From the commit the page was drawn at: a change landing before the stream opened is not missed.
  let seen = document.querySelector('article.diagram-page')?.dataset.commit;
  let source = null;
  /** A stream refused other than for the session is tried again after this long (ms), longer each time. */
  let retryMs = 0;
  let retryTimer = null;

  function streamUrl() {
    const query = new URLSearchParams();
    const draft = new URLSearchParams(location.search).get('draft');
    if (draft) query.set('draft', draft);
    if (seen) query.set('after', seen);
    return query.toString() === '' ? url : `${url}?${query}`;
  }

  function link(href, text) {
    const a = document.createElement('a');
    a.href = href;
    a.textContent = text;
    return a;
  }

  /** The page no longer follows changes: said once at the top of the page (`parts`: text and links). */
  function showStopped(id, parts) {
    document.body.dataset.live = 'ended';
    if (document.getElementById(id)) return;
    const notice = document.createElement('p');
    notice.id = id;
    notice.className = 'notice';
    notice.setAttribute('role', 'alert');
    notice.append(...parts);
    (document.querySelector('main') ?? document.body).prepend(notice);
  }

  /** The session ended: the way back to the page signed in. */
  function showEnded() {
    showStopped('live-ended', [
      'Your session has ended: this page no longer follows changes, and what it shows may be out of date. ',
      link(`/sign-in?next=${encodeURIComponent(location.pathname + location.search + location.hash)}`, 'Sign in again'),
      '.',
    ]);
  }

  /**
   * The stream's resume point is gone (404): on a draft's page, the draft was rewritten (force-pushed)
   * or removed since the page was loaded; on main's, the commit it shows is no longer there. Where
   * to go from here: the drafts and the diagram on main, or the page as it is now.
   */
  /** A draft's page whose draft was merged or closed meanwhile (409): the draft's own page says which, and main's diagram. */
  function showDraftEnded() {
    const draft = new URLSearchParams(location.search).get('draft') ?? '';
    const slug = path[2];
    const parts = [
      `Draft '${draft}' was merged or closed since this page was loaded: this page no longer follows it. See `,
      link(`/orgs/${encodeURIComponent(slug)}/drafts/${encodeURIComponent(draft)}`, 'the draft'),
    ];
    if (path[3] === 'diagrams' && shownId !== null) {
      parts.push(', or ', link(`/orgs/${encodeURIComponent(slug)}/diagrams/${encodeURIComponent(shownId)}`, 'this diagram on main'));
    }
    showStopped('live-gone', [...parts, '.']);
  }

  function showGone() {
    const draft = new URLSearchParams(location.search).get('draft');
    if (!draft) {
      showStopped('live-gone', [
        'The commit this page shows is no longer in the history: this page no longer follows changes, and what it shows may be out of date. ',
        link(location.pathname, 'Reload'),
        '.',
      ]);
      return;
    }
    const slug = path[2];
    const parts = [
      `Draft '${draft}' was rewritten or removed since this page was loaded: this page no longer follows it, and what it shows may be out of date. See `,
      link(`/orgs/${encodeURIComponent(slug)}/drafts`, 'the drafts'),
    ];
    if (path[3] === 'diagrams' && shownId !== null) {
      parts.push(', or ', link(`/orgs/${encodeURIComponent(slug)}/diagrams/${encodeURIComponent(shownId)}`, 'this diagram on main'));
    }
    showStopped('live-gone', [...parts, '.']);
  }

  function retryLater() {
    retryMs = Math.min(retryMs === 0 ? 2000 : retryMs * 2, 60_000);
    clearTimeout(retryTimer);
    retryTimer = setTimeout(() => {
      retryTimer = null;
      if (!document.hidden && source === null) open();
    }, retryMs);
  }

  /**
   * The stream was refused, and the browser gave up on it: why? Without a session the server
   * sends the stream to sign in (a redirect; 403 when the session is another organization's
   * now): the page says so. A resume point gone (404) stops it, and the page says that too; so
   * does a draft merged or closed (409). Anything else (no answer, a balancer's 502 or 503) is
   * tried again.
   */
  async function refused() {
    let response = null;
    try {
      response = await fetch(streamUrl(), { method: 'HEAD', credentials: 'same-origin', redirect: 'manual', cache: 'no-store' });
    } catch {
      // No answer: tried again below.
    }
    if (document.hidden || source !== null) return;
    if (response !== null && (response.type === 'opaqueredirect' || response.status === 401 || response.status === 403)) showEnded();
    else if (response?.status === 404) showGone();
    else if (response?.status === 409) showDraftEnded();
    else retryLater();
  }

  function open() {
    const stream = new EventSource(streamUrl());
    source = stream;
    stream.addEventListener('open', () => {
      retryMs = 0;
      document.body.dataset.live = 'open';
      // Signed in again (the link, or another tab): following again, from the last change seen.
      document.getElementById('live-ended')?.remove();
      document.getElementById('live-gone')?.remove();
    });
    stream.addEventListener('error', () => {
      if (source !== stream) return;
      if (document.body.dataset.live === 'open') delete document.body.dataset.live;
      // CONNECTING: the browser tries again by itself (the connection was lost). CLOSED: it gave up.
      if (stream.readyState !== EventSource.CLOSED) return;
      source = null;
      void refused();
    });
    stream.addEventListener('change', (event) => {
      const previous = seen;
      seen = event.lastEventId;
      const change = JSON.parse(event.data);
      if (!concerns(change)) {
        // Nothing this page shows changed: it shows this commit too, and a drop or an edit may
        // name it (else every write elsewhere, a pipeline's, made the next drop a false 412).
        const page = document.querySelector('article.diagram-page');
        if (page && !running && page.dataset.commit === previous) {
          page.dataset.commit = change.id;
          for (const input of page.querySelectorAll('form.edit-form input[name=commit]')) input.value = change.id;
        }
        return;
      }
      latest = change.id;
      void refresh();
    });
  }

  // Browsers allow six connections to one server over HTTP/1.1: a page in a background tab lets
  // go of its stream, and picks up after the last change it saw when it is shown again.
  document.addEventListener('visibilitychange', () => {
    if (document.hidden) {
      source?.close();
      source = null;
      clearTimeout(retryTimer);
      retryTimer = null;
      if (document.body.dataset.live === 'open') delete document.body.dataset.live;
    } else if (source === null) {
      // A page whose session had ended looks again too: signed in again meanwhile, it follows on.
      open();
      // A page that knows no commit to resume from looks again once.
      if (!seen) void refresh();
    }
  });
  if (!document.hidden) open();
})();
