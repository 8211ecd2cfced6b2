const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const FORBIDDEN_IN_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;
const NEEDS_ESCAPING = /[&<>"'\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/;

/**
 * Text and attribute values for HTML and SVG alike: model text is user input. Characters XML 1.0
 * forbids even as references (C0 controls other than tab, line feed and carriage return, and the
 * non-characters U+FFFE and U+FFFF) would make the SVG ill-formed, so they become U+FFFD, the
 * replacement character a reader recognises.
 */
export function esc(value: unknown): string {
  const text = String(value);
  // Most values (ids, names, numbers) need nothing: one test, not two replace() passes (a page
  // or a drawing escapes hundreds of them).
  if (!NEEDS_ESCAPING.test(text)) return text;
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!).replace(FORBIDDEN_IN_XML, '\ufffd');
}
