// c4store viewer: arranging a diagram by hand. Each drop is one POST to the diagram's
// arrange address, with If-Match naming the commit this page shows; the server answers with
// the new commit and the redrawn diagram. No framework, no build step.

(() => {
  const page = document.querySelector('.diagram-page[data-editable="true"]');
  if (!page) return;
  const canvas = page.querySelector('.canvas');
  const notice = document.getElementById('notice');
  let busy = false;
  let swallowClick = false;

  const svg = () => canvas.querySelector('svg.c4-diagram');
  const grid = () => Number(svg().dataset.grid);
  const boxOf = (g) => ({ x: +g.dataset.x, y: +g.dataset.y, w: +g.dataset.w, h: +g.dataset.h });
  const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));

  function toSvg(event) {
    const point = svg().createSVGPoint();
    point.x = event.clientX;
    point.y = event.clientY;
    return point.matrixTransform(svg().getScreenCTM().inverse());
  }

  function show(message, reload) {
    notice.textContent = message;
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

  function preview(g, start, now, resize) {
    const size = grid();
    if (resize) {
      for (const rect of g.querySelectorAll('rect.body, rect.frame')) {
        rect.setAttribute('width', String(now.w * size));
        rect.setAttribute('height', String(now.h * size));
      }
      return;
    }
    const shift = `translate(${(now.x - start.x) * size},${(now.y - start.y) * size})`;
    g.setAttribute('transform', shift);
    if (g.dataset.container === 'true') {
      for (const child of svg().querySelectorAll(`g.box[data-parent="${CSS.escape(g.dataset.id)}"]`))
        child.setAttribute('transform', shift);
    }
  }

  async function save(g, start, now, resize) {
    const body = { kind: g.dataset.kind, id: g.dataset.id, position: { x: now.x, y: now.y } };
    if (resize) {
      body.width = now.w;
      if (g.dataset.kind === 'instance') body.height = now.h;
    } else if (g.dataset.kind === 'instance' && g.dataset.container !== 'true') {
      body.parent = containerAt(now, g);
    }
    busy = true;
    page.setAttribute('aria-busy', 'true');
    try {
      const response = await fetch(page.dataset.arrangeUrl, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'if-match': `"${page.dataset.commit}"` },
        body: JSON.stringify(body),
      });
      const answer = await response.json().catch(() => ({}));
      if (response.ok) {
        // live.js moves data-commit on too when another writer's change is shown.
        page.dataset.commit = answer.commit;
        svg().outerHTML = answer.svg;
        notice.hidden = true;
        return;
      }
      preview(g, start, start, resize);
      if (response.status === 412)
        show('The diagram changed since this page was loaded: reload to see the current version. Your change was not saved.', true);
      else if (response.status === 401) show('Your session has ended: sign in again. Your change was not saved.', true);
      else show(`Not saved: ${answer.error || response.statusText}`, false);
    } catch {
      preview(g, start, start, resize);
      show('Not saved: the server could not be reached.', false);
    } finally {
      busy = false;
      page.removeAttribute('aria-busy');
    }
  }

  canvas.addEventListener('pointerdown', (event) => {
    swallowClick = false;
    if (busy || event.button !== 0) return;
    const g = event.target.closest('.draggable');
    if (!g) return;
    const resize = event.target.classList.contains('handle');
    const start = boxOf(g);
    const from = toSvg(event);
    let now = start;
    event.preventDefault();
    canvas.setPointerCapture(event.pointerId);
    const move = (e) => {
      const at = toSvg(e);
      const du = Math.round((at.x - from.x) / grid());
      const dv = Math.round((at.y - from.y) / grid());
      now = resize
        ? { ...start, w: clamp(start.w + du, 1, 100), h: g.dataset.kind === 'instance' ? clamp(start.h + dv, 1, 100) : start.h }
        : { ...start, x: start.x + du, y: start.y + dv };
      preview(g, start, now, resize);
    };
    const up = () => {
      canvas.removeEventListener('pointermove', move);
      canvas.removeEventListener('pointerup', up);
      canvas.removeEventListener('pointercancel', up);
      const changed = now.x !== start.x || now.y !== start.y || now.w !== start.w || now.h !== start.h;
      if (!changed) return;
      swallowClick = true;
      void save(g, start, now, resize);
    };
    canvas.addEventListener('pointermove', move);
    canvas.addEventListener('pointerup', up);
    canvas.addEventListener('pointercancel', up);
  });

  // A drag ends with a click on the box's link; it must not open the panel.
  canvas.addEventListener(
    'click',
    (event) => {
      if (!swallowClick) return;
      swallowClick = false;
      event.preventDefault();
      event.stopPropagation();
    },
    true,
  );
})();
