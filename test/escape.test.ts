import test from 'ava';
import { bdi, esc, escExact, showBidiControls } from '../src/escape.js';

test('esc leaves plain text and numbers as they are', (t) => {
  t.is(esc('Service 12 — über'), 'Service 12 — über');
  t.is(esc(42.5), '42.5');
  t.is(esc(''), '');
});

test('esc escapes each markup character and replaces what XML forbids, alone or mixed', (t) => {
  t.is(esc('&'), '&amp;');
  t.is(esc('<'), '&lt;');
  t.is(esc('>'), '&gt;');
  t.is(esc('"'), '&quot;');
  t.is(esc("'"), '&#39;');
  // A value whose only trouble is a forbidden character is caught too.
  t.is(esc('bell\u0007'), 'bell\ufffd');
  t.is(esc('\uffff\ufffe\u001f'), '\ufffd\ufffd\ufffd');
  t.is(esc('tab\tline\ncr\r'), 'tab\tline\ncr\r');
  t.is(esc(`<a href="x?a=1&b='2'">\u0000</a>`), '&lt;a href=&quot;x?a=1&amp;b=&#39;2&#39;&quot;&gt;\ufffd&lt;/a&gt;');
});

test('esc shows each explicit bidi control as [U+XXXX] instead of passing it on; the marks stay', (t) => {
  t.is(esc('abc\u202edef'), 'abc[U+202E]def');
  t.is(
    esc('\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069'),
    '[U+202A][U+202B][U+202C][U+202D][U+202E][U+2066][U+2067][U+2068][U+2069]',
  );
  t.is(esc('<b>\u202e'), '&lt;b&gt;[U+202E]');
  // Marks are strong characters without scope: contained by isolation, used by writers of RTL scripts.
  t.is(esc('\u200e\u200f\u061c'), '\u200e\u200f\u061c');
  t.is(showBidiControls('x\u2069\u202ey'), 'x[U+2069][U+202E]y');
});

test('escExact keeps every character a form field or a link must send back, bidi controls too', (t) => {
  t.is(escExact('abc\u202edef'), 'abc\u202edef');
  t.is(escExact(`"a"&<\u0007>`), '&quot;a&quot;&amp;&lt;\ufffd&gt;');
  t.is(escExact('plain'), 'plain');
});

test('bdi isolates user text, escaped, each bidi control shown as a marked [U+XXXX] naming it', (t) => {
  t.is(bdi('Web Shop'), '<bdi>Web Shop</bdi>');
  t.is(bdi('<a>&'), '<bdi>&lt;a&gt;&amp;</bdi>');
  t.is(bdi(42), '<bdi>42</bdi>');
  const shown = bdi('abc\u202edef');
  t.false(/[\u202a-\u202e\u2066-\u2069]/.test(shown));
  t.regex(shown, /^<bdi>abc<span class="bidi-control" title="[^"]*U\+202E RIGHT-TO-LEFT OVERRIDE[^"]*">\[U\+202E\]<\/span>def<\/bdi>$/);
  t.regex(bdi('\u2069'), /title="[^"]*U\+2069 POP DIRECTIONAL ISOLATE[^"]*">\[U\+2069\]</);
});
