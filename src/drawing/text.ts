/**
 * Text for the drawing: how wide it is, where it wraps, and how much of it is drawn.
 *
 * Every step here is linear in its input and the input itself is bounded first (`clip`), so a
 * name of 80 KB costs what a name of DRAWN_TEXT characters does (issue 24.2). Widths are the
 * advance widths of DejaVu Sans, the font the drawing asks for first and the one bundled for
 * PNG rendering, so boxes, labels and wrapping agree with what the browser draws (kerning only
 * makes real text narrower). Characters outside Latin-1 count as one em, which is at least as
 * wide as most glyphs; emoji as 1.25 em (EMOJI_WIDTH).
 */
import { showBidiControls } from '../escape.js';
import { BOLD_WIDTHS, REGULAR_WIDTHS } from './font-widths.js';

/** At most this many characters of a name, label or description are drawn (docs/api.md, Limits). */
export const DRAWN_TEXT = 300;

export interface Font {
  size: number;
  bold?: boolean;
}

/** The first `max` characters (code points) of `text`, with "…" when something was cut. */
export function clip(text: string, max = DRAWN_TEXT): string {
  // Scans at most max + 1 code points: cost independent of the text's length.
  let out = '';
  let count = 0;
  for (const ch of text) {
    if (count === max) return `${out}…`;
    out += ch;
    count++;
  }
  return out;
}

/**
 * Emoji (U+1F000–U+1FAFF: emoticons, pictographs, transport, flags' letters, …) are drawn
 * wider than an em: 1.25 em in Noto Color Emoji, the browser's emoji font on Linux (Chromium
 * measured), about as much in Apple's and Microsoft's. Counted as one em, a name of emoji ran a
 * quarter of its width out of its box.
 */
const EMOJI_WIDTH = 1250;

function charWidth(code: number, table: readonly number[]): number {
  if (code >= 32 && code < 256) return table[code - 32]!;
  if (code < 32) return 0;
  if (code >= 0x1f000 && code <= 0x1faff) return EMOJI_WIDTH;
  return 1000;
}

/** Width of `text` in pixels when drawn in `font`. */
export function textWidth(text: string, font: Font): number {
  const table = font.bold ? BOLD_WIDTHS : REGULAR_WIDTHS;
  let units = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.codePointAt(i)!;
    if (code > 0xffff) i++;
    units += charWidth(code, table);
  }
  return (units * font.size) / 1000;
}

/**
 * `text` in lines at most `maxWidth` pixels wide, broken at spaces; a word is split only when it
 * alone is wider than a line. At most `maxLines` lines: the last one ends in "…" when text was
 * left over, or when a single character is wider than a line (the text stops there: no line is
 * wider than `maxWidth`, unless a lone "…" is). One pass over the (clipped) text.
 *
 * Its explicit bidi controls are drawn as `[U+202E]` (src/escape.ts, as on the pages), and
 * measured so: obeyed, an override would show the name in another order than its characters, and
 * run on into whatever the same `<text>` holds after it (a boundary's `[Type]`). The SVG cannot
 * isolate a name from that: resvg (the PNGs) obeys an override but ignores `unicode-bidi`, and
 * Chromium lets a U+2069 in the text end a tspan's `unicode-bidi="isolate"`. A character shown
 * is the same in every renderer.
 */
export function wrapText(text: string, maxWidth: number, font: Font, maxLines = Infinity): string[] {
  const words = showBidiControls(clip(text))
    .split(/\s+/)
    .filter((w) => w !== '');
  const table = font.bold ? BOLD_WIDTHS : REGULAR_WIDTHS;
  const scale = font.size / 1000;
  const space = charWidth(32, table) * scale;
  const lines: string[] = [];
  let line = '';
  let width = 0;
  let cut = false;
  const push = (): boolean => {
    if (lines.length === maxLines) {
      cut = true;
      return false;
    }
    lines.push(line);
    line = '';
    width = 0;
    return true;
  };
  for (const word of words) {
    const w = textWidth(word, font);
    if (line !== '' && width + space + w <= maxWidth) {
      line += ` ${word}`;
      width += space + w;
      continue;
    }
    if (line !== '' && !push()) break;
    if (w <= maxWidth) {
      line = word;
      width = w;
      continue;
    }
    // A word wider than a line: cut it where it stops fitting, character by character. A
    // character wider than a whole line ends the text there, with "…" (it ran out of its box).
    for (const ch of word) {
      const cw = charWidth(ch.codePointAt(0)!, table) * scale;
      if (line !== '' && width + cw > maxWidth && !push()) break;
      if (line === '' && cw > maxWidth) {
        cut = true;
        break;
      }
      line += ch;
      width += cw;
    }
    if (cut) break;
  }
  if (!cut && line !== '') push();
  if (cut && lines.length === 0 && maxLines > 0) lines.push('');
  if (cut && lines.length > 0) lines[lines.length - 1] = ellipsize(lines[lines.length - 1]!, maxWidth, font);
  return lines;
}

/** `line` shortened so that it and a trailing "…" fit in `maxWidth`. */
export function ellipsize(line: string, maxWidth: number, font: Font): string {
  const room = maxWidth - textWidth('…', font);
  let out = '';
  let width = 0;
  for (const ch of line) {
    const w = textWidth(ch, font);
    if (width + w > room) break;
    out += ch;
    width += w;
  }
  return `${out.trimEnd()}…`;
}

/** The first line of a description (up to its first line break), or ''. */
export function firstLine(text: string | null | undefined): string {
  if (!text) return '';
  const head = clip(text);
  const end = head.search(/\r|\n/);
  return (end < 0 ? head : head.slice(0, end)).trim();
}
