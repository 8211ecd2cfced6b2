// c4store viewer: the diagram page's script. Every page: zoom (wheel, pinch, buttons), fit,
// pan (drag the background, or one finger), Escape closes the open panel. An editor's page
// also arranges by hand: each drop is one POST to the diagram's arrange address, with If-Match
// naming the commit this page shows; the server answers with the new commit and the redrawn
// diagram. No framework, no build step.

(() => {
  const page = document.querySelector('.diagram-page');
  if (!page) return;
  const canvas = page.querySelector('.canvas');
  const svg = () => canvas.querySelector('svg.c4-diagram');
  const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
  /** A press becomes a drag only past this many pixels: anything less is a click on the box's link. */
  const DRAG_THRESHOLD_PX = 4;

  /** The click that ends a drag or a pan must not follow the box's link. */
  const clicks = (() => {
    let swallow = false;
    canvas.addEventListener(
      'click',
      (event) => {
        if (!swallow) return;
        swallow = false;
        event.preventDefault();
        event.stopPropagation();
      },
      true,
    );
    canvas.addEventListener(
      'pointerdown',
      () => {
        swallow = false;
      },
      true,
    );
    return {
      swallowNext: () => {
        swallow = true;
      },
    };
  })();

  const view = zoomAndPan();
  closeOnEscape();
  if (page.dataset.editable === 'true') arrange();

  /**
   * The visible part of the drawing is the SVG's viewBox: `scale` screen pixels per drawing
   * unit, `x`/`y` the drawing point at the canvas's top-left corner. The drawing's own viewBox
   * (its extent) is kept in data-extent for fitting and printing.
   */
  function zoomAndPan() {
    const MIN_SCALE = 0.05;
    const MAX_SCALE = 8;
    const STEP = 1.25;
    const state = { x: 0, y: 0, scale: 1 };
    /** Whether the person has zoomed or panned: a resize then keeps their view. */
    let touched = false;
    const pointers = new Map();
    let pinch = null;

    const extent = () => {
      const el = svg();
      if (!el.dataset.extent) el.dataset.extent = el.getAttribute('viewBox');
      const [x, y, w, h] = el.dataset.extent.split(/[\s,]+/).map(Number);
      return { x, y, w, h };
    };
    const size = () => ({ w: canvas.clientWidth || 1, h: canvas.clientHeight || 1 });

    function apply() {
      const el = svg();
      extent();
      const { w, h } = size();
      el.setAttribute('width', String(w));
      el.setAttribute('height', String(h));
      el.setAttribute('viewBox', `${state.x} ${state.y} ${w / state.scale} ${h / state.scale}`);
      canvas.dataset.scale = String(state.scale);
      label.textContent = `${Math.round(state.scale * 100)}%`;
    }

    /** The whole drawing in the canvas, centred; never larger than its own size. */
    function fitToCanvas(allowZoomIn) {
      const e = extent();
      const { w, h } = size();
      const scale = clamp(Math.min(w / e.w, h / e.h), MIN_SCALE, allowZoomIn ? MAX_SCALE : 1);
      state.scale = scale;
      state.x = e.x - (w / scale - e.w) / 2;
      state.y = e.y - (h / scale - e.h) / 2;
      apply();
    }

    /** Zooms by `factor` keeping the drawing point under the screen point (cx, cy) where it is. */
    function zoomAt(factor, cx, cy) {
      touched = true;
      const rect = canvas.getBoundingClientRect();
      const px = cx - rect.left;
      const py = cy - rect.top;
      const scale = clamp(state.scale * factor, MIN_SCALE, MAX_SCALE);
      state.x += px / state.scale - px / scale;
      state.y += py / state.scale - py / scale;
      state.scale = scale;
      apply();
    }
    const zoomCentre = (factor) => {
      const rect = canvas.getBoundingClientRect();
      zoomAt(factor, rect.left + rect.width / 2, rect.top + rect.height / 2);
    };
    function actualSize() {
      const rect = canvas.getBoundingClientRect();
      zoomAt(1 / state.scale, rect.left + rect.width / 2, rect.top + rect.height / 2);
    }

    // The buttons, above the drawing and its panels.
    const bar = document.createElement('div');
    bar.className = 'zoom-bar';
    bar.setAttribute('role', 'toolbar');
    bar.setAttribute('aria-label', 'Zoom');
    const button = (text, title, action) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = text;
      b.title = title;
      b.setAttribute('aria-label', title);
      b.addEventListener('click', action);
      bar.append(b);
      return b;
    };
    button('−', 'Zoom out (−)', () => zoomCentre(1 / STEP)).dataset.zoom = 'out';
    button('+', 'Zoom in (+)', () => zoomCentre(STEP)).dataset.zoom = 'in';
    function fitButton() {
      fitToCanvas(true);
      touched = true;
    }
    button('Fit', 'Fit the drawing to the window (0)', fitButton).dataset.zoom = 'fit';
    button('1:1', 'Actual size (1)', actualSize).dataset.zoom = 'actual';
    const label = document.createElement('span');
    label.className = 'zoom-level';
    label.setAttribute('aria-live', 'polite');
    bar.append(label);
    canvas.closest('.layout').before(bar);

    // Keys, as in map and image viewers; never while typing into a field.
    document.addEventListener('keydown', (event) => {
      if (event.ctrlKey || event.metaKey || event.altKey || event.target.closest('input, textarea, select, [contenteditable]')) return;
      const action = {
        '+': () => zoomCentre(STEP),
        '=': () => zoomCentre(STEP),
        '-': () => zoomCentre(1 / STEP),
        0: fitButton,
        1: actualSize,
      }[event.key];
      if (!action) return;
      action();
      event.preventDefault();
    });

    canvas.addEventListener(
      'wheel',
      (event) => {
        event.preventDefault();
        // Lines or pages on some mice, pixels on touchpads (whose pinch comes as ctrl + wheel).
        const unit = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? canvas.clientHeight : 1;
        const delta = event.deltaY * unit * (event.ctrlKey ? 4 : 1);
        zoomAt(Math.exp(-delta * 0.0015), event.clientX, event.clientY);
      },
      { passive: false },
    );

    // Pan: a press on the background (an editor's boxes are dragged instead), one finger anywhere else.
    // Two fingers pinch.
    canvas.addEventListener('pointerdown', (event) => {
      if (event.pointerType === 'mouse' && event.button !== 0) return;
      pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
      if (pointers.size === 2) {
        const [a, b] = [...pointers.values()];
        pinch = { distance: Math.hypot(a.x - b.x, a.y - b.y) || 1, scale: state.scale };
        clicks.swallowNext();
        return;
      }
      if (pointers.size > 2) return;
      const onBox = page.dataset.editable === 'true' && event.target.closest('.draggable');
      if (onBox) return;
      const start = { x: event.clientX, y: event.clientY, vx: state.x, vy: state.y };
      let panning = false;
      let pinched = false;
      const move = (e) => {
        if (e.pointerId !== event.pointerId) return;
        // Once a second finger joins, this press pans no more: the finger left after a pinch would jump the view.
        if (pinch) pinched = true;
        if (pinched) return;
        const dx = e.clientX - start.x;
        const dy = e.clientY - start.y;
        if (!panning) {
          if (Math.hypot(dx, dy) < DRAG_THRESHOLD_PX) return;
          panning = true;
          canvas.setPointerCapture(event.pointerId);
          canvas.classList.add('panning');
        }
        touched = true;
        state.x = start.vx - dx / state.scale;
        state.y = start.vy - dy / state.scale;
        apply();
      };
      const up = (e) => {
        if (e.pointerId !== event.pointerId) return;
        window.removeEventListener('pointermove', move);
        window.removeEventListener('pointerup', up);
        window.removeEventListener('pointercancel', up);
        canvas.classList.remove('panning');
        if (panning) clicks.swallowNext();
      };
      window.addEventListener('pointermove', move);
      window.addEventListener('pointerup', up);
      window.addEventListener('pointercancel', up);
    });
    window.addEventListener('pointermove', (event) => {
      if (!pointers.has(event.pointerId)) return;
      pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
      if (!pinch || pointers.size !== 2) return;
      const [a, b] = [...pointers.values()];
      const distance = Math.hypot(a.x - b.x, a.y - b.y) || 1;
      zoomAt((pinch.scale * (distance / pinch.distance)) / state.scale, (a.x + b.x) / 2, (a.y + b.y) / 2);
    });
    const release = (event) => {
      pointers.delete(event.pointerId);
      if (pointers.size < 2) pinch = null;
    };
    window.addEventListener('pointerup', release);
    window.addEventListener('pointercancel', release);

    // Printed: the whole drawing across the page, whatever the screen showed.
    window.addEventListener('beforeprint', () => {
      const el = svg();
      el.setAttribute('viewBox', el.dataset.extent);
      el.removeAttribute('width');
      el.removeAttribute('height');
    });
    window.addEventListener('afterprint', apply);
    // The canvas changes size with the window, an opened panel, a scrollbar coming: until the
    // person has zoomed or panned, the drawing stays fitted; afterwards their view is kept.
    new ResizeObserver(() => (touched ? apply() : fitToCanvas(false))).observe(canvas);

    fitToCanvas(false);
    return { apply, pinching: () => pinch !== null };
  }

  /** Escape closes the open panel and puts the focus back on its box. */
  function closeOnEscape() {
    document.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape' || !location.hash.startsWith('#c-')) return;
      const id = location.hash.slice(1);
      const { scrollX, scrollY } = window;
      // A navigation to the empty fragment, as the panel's own close link does: :target then clears.
      location.hash = '';
      window.scrollTo(scrollX, scrollY);
      const box = svg().querySelector(`a[href="#${CSS.escape(id)}"]`);
      if (box) box.focus({ preventScroll: true });
      event.preventDefault();
    });
  }

  function arrange() {
    const notice = document.getElementById('notice');
    let busy = false;

    const grid = () => Number(svg().dataset.grid);
    const boxOf = (g) => ({ x: +g.dataset.x, y: +g.dataset.y, w: +g.dataset.w, h: +g.dataset.h });
    function toSvg(event) {
      const point = svg().createSVGPoint();
      point.x = event.clientX;
      point.y = event.clientY;
      return point.matrixTransform(svg().getScreenCTM().inverse());
    }

    /**
     * The server's message, which may quote model text: isolated, and its bidi controls shown
     * as [U+202E], as the pages show model text (src/escape.ts), so that a name in it cannot
     * reorder the rest.
     */
    function show(message, reload) {
      staleFrom = null;
      const text = document.createElement('bdi');
      text.textContent = message.replace(/[\u202a-\u202e\u2066-\u2069]/g, (c) => `[U+${c.charCodeAt(0).toString(16).toUpperCase()}]`);
      notice.replaceChildren(text);
      if (reload) {
        const button = document.createElement('button');
        button.type = 'button';
        button.textContent = 'Reload';
        button.addEventListener('click', () => location.reload());
        notice.append(button);
      }
      notice.hidden = false;
    }

    /** The smallest container whose box holds the centre of `box`, or null. */
    function containerAt(box, self) {
      const cx = box.x + box.w / 2;
      const cy = box.y + box.h / 2;
      let best = null;
      for (const g of svg().querySelectorAll('g.box[data-container="true"]')) {
        if (g === self) continue;
        const c = boxOf(g);
        if (cx >= c.x && cx <= c.x + c.w && cy >= c.y && cy <= c.y + c.h && (!best || c.w * c.h < best.area))
          best = { id: g.dataset.id, area: c.w * c.h };
      }
      return best ? best.id : null;
    }

    /** The element shown at `now` (moved, resized or both) before it is saved; `start` where it is stored. */
    function preview(g, start, now) {
      const size = grid();
      for (const rect of g.querySelectorAll('rect.body, rect.frame')) {
        rect.setAttribute('width', String(now.w * size));
        rect.setAttribute('height', String(now.h * size));
      }
      const shift = `translate(${(now.x - start.x) * size},${(now.y - start.y) * size})`;
      const carried = g.dataset.container === 'true' ? [...svg().querySelectorAll(`g.box[data-parent="${CSS.escape(g.dataset.id)}"]`)] : [];
      for (const each of [g, ...carried]) each.setAttribute('transform', shift);
    }

    /**
     * A drop refused because the diagram changed meanwhile (412), sent from commit `from`. Once
     * live.js has brought the page past that commit, the notice no longer asks for a reload.
     */
    let staleFrom = null;
    const STALE = 'The diagram changed since this page was loaded: reload to see the current version. Your change was not saved.';
    const CAUGHT_UP =
      'The diagram changed since this page was loaded, so your change was not saved. The page now shows the current version: make your change again if it is still needed.';
    function showStale(from) {
      if (page.dataset.commit !== from) {
        show(CAUGHT_UP, false);
        return;
      }
      show(STALE, true);
      staleFrom = from;
    }
    new MutationObserver(() => {
      if (staleFrom === null || notice.hidden || page.dataset.commit === staleFrom) return;
      show(CAUGHT_UP, false);
    }).observe(page, { attributes: true, attributeFilter: ['data-commit'] });

    const UNANSWERED = 'The server did not answer, so your change may or may not have been saved: reload to see the diagram as it is now.';

    /**
     * One drop: the element at `now`. A move of a box that is no container also says which
     * container it now sits in; a resize sends the size. `focus`: the drop came from the keyboard,
     * whose focus goes back to the element once the drawing is redrawn.
     */
    async function save(g, start, now, focus = false) {
      const body = { kind: g.dataset.kind, id: g.dataset.id, position: { x: now.x, y: now.y } };
      if (now.w !== start.w || now.h !== start.h) {
        body.width = now.w;
        if (g.dataset.kind === 'instance') body.height = now.h;
      }
      if ((now.x !== start.x || now.y !== start.y) && g.dataset.kind === 'instance' && g.dataset.container !== 'true') {
        body.parent = containerAt(now, g);
      }
      /** The commit the drop was last sent from (its If-Match). */
      let from = page.dataset.commit;
      busy = true;
      page.setAttribute('aria-busy', 'true');
      const send = async () => {
        from = page.dataset.commit;
        try {
          const response = await fetch(page.dataset.arrangeUrl, {
            method: 'POST',
            credentials: 'same-origin',
            headers: { 'content-type': 'application/json', accept: 'application/json', 'if-match': `"${from}"` },
            body: JSON.stringify(body),
          });
          return { response, answer: await response.json().catch(() => ({})) };
        } catch {
          return { response: null, answer: {} };
        }
      };
      /**
       * Whether c4store itself answered: a refusal of its own is JSON with `error` (its 500 may
       * come after the commit). No answer, or a load balancer's (502, 503, 504 when the instance
       * died mid-request), leaves it open whether the drop was saved.
       */
      const answered = ({ response, answer }) =>
        response !== null && (response.ok || (typeof answer.error === 'string' && response.status !== 500));
      try {
        let sent = await send();
        // Sent again, a drop is made now or found made already (the server answers a drop
        // already in place as saved, If-Match notwithstanding): either way the answer is sure.
        if (!answered(sent)) sent = await send();
        const { response, answer } = sent;
        if (!answered(sent)) {
          preview(g, start, start);
          show(UNANSWERED, true);
          return;
        }
        if (response.ok) {
          // live.js moves data-commit on too when another writer's change is shown.
          page.dataset.commit = answer.commit;
          // The panels' edit forms name the commit this page shows, which is now the drop's.
          for (const input of page.querySelectorAll('form.edit-form input[name=commit]')) input.value = answer.commit;
          svg().outerHTML = answer.svg;
          view.apply();
          notice.hidden = true;
          if (focus) focusOn(body.id);
          return;
        }
        preview(g, start, start);
        if (response.status === 412) showStale(from);
        else if (response.status === 401) show('Your session has ended: sign in again. Your change was not saved.', true);
        else {
          // The API's text is the rule's exactly; which element it concerns comes beside it (docs/api.md §5.4).
          const context = response.headers.get('c4store-error-context');
          const about = context ? ` (${decodeURIComponent(context)})` : '';
          show(`Not saved: ${answer.error || response.statusText}${about}`, false);
        }
      } catch {
        preview(g, start, start);
        show(UNANSWERED, true);
      } finally {
        busy = false;
        page.removeAttribute('aria-busy');
      }
    }

    const changed = (start, now) => now.x !== start.x || now.y !== start.y || now.w !== start.w || now.h !== start.h;
    /** `box` grown by whole grid units, 1–100 each way; a text area's height follows from its text. */
    const resized = (g, box, du, dv) => ({
      ...box,
      w: clamp(box.w + du, 1, 100),
      h: g.dataset.kind === 'instance' ? clamp(box.h + dv, 1, 100) : box.h,
    });
    /** The focus on the element `id` of the drawing as it is now (its link, or the element itself). */
    function focusOn(id) {
      const g = svg().querySelector(`.draggable[data-id="${CSS.escape(id)}"]`);
      const target = g?.querySelector('a') ?? g;
      if (target) target.focus({ preventScroll: true });
    }

    // The keyboard does what the mouse does: on a focused box or text area, arrow keys move it a
    // grid unit a press and Shift+arrows resize it, shown at once; Enter saves the whole move as
    // one drop (it opens the panel only when nothing was moved), Escape puts it back, and so does
    // the focus leaving it. live.js redraws nothing under a move (data-moving).
    const ARROWS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    let moving = null;
    function putBack() {
      if (!moving) return;
      preview(moving.g, moving.start, moving.start);
      delete moving.g.dataset.moving;
      moving = null;
    }
    canvas.addEventListener('keydown', (event) => {
      const g = event.target.closest('.draggable');
      if (!g || busy || event.ctrlKey || event.metaKey || event.altKey) return;
      const arrow = ARROWS[event.key];
      if (arrow) {
        event.preventDefault();
        if (moving?.g !== g) {
          putBack();
          moving = { g, start: boxOf(g), now: boxOf(g) };
          g.dataset.moving = 'true';
        }
        const [du, dv] = arrow;
        const now = moving.now;
        moving.now = event.shiftKey ? resized(g, now, du, dv) : { ...now, x: now.x + du, y: now.y + dv };
        preview(g, moving.start, moving.now);
        return;
      }
      if (moving?.g !== g) return;
      if (event.key === 'Escape') {
        event.preventDefault();
        event.stopPropagation();
        putBack();
      } else if (event.key === 'Enter') {
        const { start, now } = moving;
        delete g.dataset.moving;
        moving = null;
        if (!changed(start, now)) return;
        event.preventDefault();
        void save(g, start, now, true);
      }
    });
    canvas.addEventListener('focusout', (event) => {
      if (moving && !moving.g.contains(event.relatedTarget)) putBack();
    });

    canvas.addEventListener('pointerdown', (event) => {
      if (busy || event.button !== 0) return;
      putBack();
      const g = event.target.closest('.draggable');
      if (!g || view.pinching()) return;
      const resize = event.target.classList.contains('handle');
      const start = boxOf(g);
      const from = toSvg(event);
      const pressed = { x: event.clientX, y: event.clientY };
      let now = start;
      let dragging = false;
      // No text selection or native drag of the link; the click still comes (it is not a mouse event).
      event.preventDefault();
      // No capture yet: a captured pointer sends its click to the canvas, never to the box's link,
      // so a plain click could not open the panel (issue 24.16). Capture begins with the drag.
      const move = (e) => {
        if (e.pointerId !== event.pointerId) return;
        if (!dragging) {
          if (Math.hypot(e.clientX - pressed.x, e.clientY - pressed.y) < DRAG_THRESHOLD_PX) return;
          dragging = true;
          canvas.setPointerCapture(event.pointerId);
        }
        e.preventDefault();
        const at = toSvg(e);
        const du = Math.round((at.x - from.x) / grid());
        const dv = Math.round((at.y - from.y) / grid());
        now = resize ? resized(g, start, du, dv) : { ...start, x: start.x + du, y: start.y + dv };
        preview(g, start, now);
      };
      const up = (e) => {
        if (e.pointerId !== event.pointerId) return;
        window.removeEventListener('pointermove', move);
        window.removeEventListener('pointerup', up);
        window.removeEventListener('pointercancel', up);
        if (!dragging) return;
        // A drag ends with a click on the canvas or the box's link; it must not open the panel.
        clicks.swallowNext();
        if (changed(start, now)) void save(g, start, now);
      };
      window.addEventListener('pointermove', move);
      window.addEventListener('pointerup', up);
      window.addEventListener('pointercancel', up);
    });
  }
})();
