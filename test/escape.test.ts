import test from 'ava';
import { esc } from '../src/escape.js';

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
