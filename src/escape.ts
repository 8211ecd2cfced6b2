const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const FORBIDDEN_IN_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;
const NEEDS_EXACT_ESCAPING = /[&<>"'\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/;
const NEEDS_ESCAPING = /[&<>"'\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff\u202a-\u202e\u2066-\u2069]/;

/**
 * The explicit bidirectional formatting characters: embeddings, overrides and isolates (U+202A,
 * U+202B, U+202D, U+202E, U+2066–U+2068) and what ends them (U+202C, U+2069). Obeyed, they show
 * a name in another order than its characters (U+202E: "abc\u202Edef" reads "abcfed") and, where
 * the name is not isolated, the text after it too: a page could say something else than the data.
 * Isolating the name (`bdi`) is not enough on its own: Chromium lets a U+2069 in the name end the
 * name's isolation early, and an override after it then runs on into the page. So wherever model
 * text is shown they are shown, as `[U+202E]`, never obeyed. The marks (U+200E, U+200F, U+061C)
 * are left as they are: each is an invisible strong character, no more able to reorder the text
 * around an isolated name than a Hebrew or Arabic letter, and writers of those scripts use them.
 */
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/g;

const BIDI_CONTROL_NAMES: Record<string, string> = {
  '\u202a': 'LEFT-TO-RIGHT EMBEDDING',
  '\u202b': 'RIGHT-TO-LEFT EMBEDDING',
  '\u202c': 'POP DIRECTIONAL FORMATTING',
  '\u202d': 'LEFT-TO-RIGHT OVERRIDE',
  '\u202e': 'RIGHT-TO-LEFT OVERRIDE',
  '\u2066': 'LEFT-TO-RIGHT ISOLATE',
  '\u2067': 'RIGHT-TO-LEFT ISOLATE',
  '\u2068': 'FIRST STRONG ISOLATE',
  '\u2069': 'POP DIRECTIONAL ISOLATE',
};

/** `[U+202E]`: how a bidi control is shown instead of obeyed. */
function shownControl(control: string): string {
  return `[U+${control.charCodeAt(0).toString(16).toUpperCase()}]`;
}

/** `text` with each explicit bidi control written as `[U+XXXX]` (the drawing measures text in this form). */
export function showBidiControls(text: string): string {
  return text.replace(BIDI_CONTROLS, shownControl);
}

function escapeMarkup(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!).replace(FORBIDDEN_IN_XML, '\ufffd');
}

/**
 * Model text shown to people, in HTML and SVG, as text or as an attribute's value (a tooltip, an
 * accessible name): model text is user input. Characters XML 1.0 forbids even as references (C0
 * controls other than tab, line feed and carriage return, and the non-characters U+FFFE and
 * U+FFFF) would make the SVG ill-formed, so they become U+FFFD, the replacement character a
 * reader recognises; explicit bidi controls are shown as `[U+XXXX]` (BIDI_CONTROLS).
 *
 * In the flow of an HTML page, user text goes through `bdi` instead, which also isolates it; a
 * value the browser sends back or follows (a form field, a link) through `escExact`.
 */
export function esc(value: unknown): string {
  const text = String(value);
  // Most values (ids, names, numbers) need nothing: one test, not two replace() passes (a page
  // or a drawing escapes hundreds of them).
  if (!NEEDS_ESCAPING.test(text)) return text;
  return showBidiControls(escapeMarkup(text));
}

/**
 * An attribute value whose characters must survive exactly: a form field's value (an edit form
 * saves what it was given), a hidden field, a link's address. Markup is escaped and what XML
 * forbids replaced, as `esc` does; bidi controls are kept. Such a value is not shown in the flow
 * of the page (a field shows it in a box of its own, its own paragraph).
 */
export function escExact(value: unknown): string {
  const text = String(value);
  if (!NEEDS_EXACT_ESCAPING.test(text)) return text;
  return escapeMarkup(text);
}

/**
 * User text in the flow of an HTML page (a name in a heading, a list row, a sentence): escaped
 * as `esc` does, inside `<bdi>`, so that its direction is its own (`dir=auto`) and it cannot
 * reorder the text around it, which HTML's bidi isolation is for. Each explicit bidi control is
 * shown as a marked `[U+XXXX]` naming it, as a code host warns of hidden characters, rather than
 * obeyed (see BIDI_CONTROLS for why isolation alone is not enough).
 */
export function bdi(value: unknown): string {
  const text = String(value);
  const escaped = NEEDS_ESCAPING.test(text)
    ? escapeMarkup(text).replace(
        BIDI_CONTROLS,
        (c) =>
          `<span class="bidi-control" title="Hidden character ${shownControl(c).slice(1, -1)} ${BIDI_CONTROL_NAMES[c]}: it would reorder the text, so it is shown instead">${shownControl(c)}</span>`,
      )
    : text;
  return `<bdi>${escaped}</bdi>`;
}
