/**
 * The drawing as PNG: the very SVG of svg.ts, rasterized by resvg with the DejaVu fonts bundled
 * in node_modules (dejavu-fonts-ttf), so a PNG is the same on every machine. DejaVu has no
 * Chinese, Japanese or Korean and few emoji: for those characters alone resvg falls back to the
 * fonts of FALLBACK_FONT_FILES the machine has (Debian's fonts-wqy-microhei, fonts-noto-cjk) and
 * those named in C4STORE_PNG_FONTS; without any, such text is empty boxes, as emoji are. Rasterizing is synchronous and grows with the picture's pixels, and resvg aborts
 * the process it runs in on a bug of its own, so it runs in a child process (png-process.ts);
 * one that takes longer than the timeout is killed and the request refused, one that dies fails
 * its request alone.
 * Callers take turns (the viewer's answer queues organizations fairly); this module runs what
 * it is given.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ApiError } from '../errors.js';
import { ProcessPool } from '../processes.js';
import { moduleBeside } from '../threads.js';

/** The largest picture drawn, in pixels (RGBA: 4 bytes each while rendering); larger ones are scaled down to it. */
export const MAX_PNG_PIXELS = 16_000_000;
/** The longest side drawn, in pixels. */
export const MAX_PNG_SIDE = 16_384;
/** The scales a client may ask for (`?scale=`). */
export const PNG_SCALES = { min: 0.25, max: 4 } as const;
export const DEFAULT_PNG_TIMEOUT = 30_000;

export interface PngTask {
  svg: string;
  zoom: number;
  fontFiles: string[];
}

const FONT_FILES = [
  'DejaVuSans.ttf',
  'DejaVuSans-Bold.ttf',
  'DejaVuSans-Oblique.ttf',
  'DejaVuSans-BoldOblique.ttf',
  'DejaVuSansMono.ttf',
  'DejaVuSansMono-Bold.ttf',
  'DejaVuSerif.ttf',
];

/**
 * Fonts for what DejaVu lacks, where Debian's packages put them: Chinese, Japanese, Korean. Not
 * Symbola for emoji: resvg then set a whole line with an emoji in it in Symbola, and dropped words.
 */
export const FALLBACK_FONT_FILES = [
  '/usr/share/fonts/truetype/wqy/wqy-microhei.ttc',
  '/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc',
  '/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc',
];

let fontFiles: string[] | undefined;

/** The fonts a PNG is drawn with: the bundled ones, found through Node's own resolution (source and dist alike), and the fallbacks found. */
function pngFonts(): string[] {
  if (!fontFiles) {
    const root = path.dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json'));
    const named = (process.env.C4STORE_PNG_FONTS ?? '').split(path.delimiter).filter((file) => file !== '');
    // DejaVu first: the fallbacks draw only characters it has none for.
    fontFiles = [
      ...FONT_FILES.map((name) => path.join(root, 'ttf', name)),
      ...[...FALLBACK_FONT_FILES, ...named].filter((file) => existsSync(file)),
    ];
  }
  return fontFiles;
}

/** One child kept between renders (resvg loaded) for a minute; callers take turns (see the module comment). */
const renderers = new ProcessPool(moduleBeside(import.meta.url, 'png-process'), {
  maxOldGenerationSizeMb: 256,
  keep: 1,
  idleMs: idleMsOf(process.env.C4STORE_PNG_IDLE_MS),
});

/** `C4STORE_PNG_IDLE_MS` (docs/deploy.md); a minute when unset or not a number of milliseconds. */
function idleMsOf(value: string | undefined): number {
  const ms = value === undefined || value.trim() === '' ? Number.NaN : Number(value);
  return Number.isFinite(ms) && ms >= 0 ? ms : 60_000;
}

/** The zoom that draws `width` × `height` at `scale`, or less when that would exceed the pixel bounds. */
export function boundedZoom(width: number, height: number, scale: number): number {
  const w = Math.max(1, width);
  const h = Math.max(1, height);
  let zoom = Math.min(scale, MAX_PNG_SIDE / w, MAX_PNG_SIDE / h, Math.sqrt(MAX_PNG_PIXELS / (w * h)));
  // The picture's sides are whole pixels, rounded up: a little less zoom keeps them within the bounds.
  const fits = (z: number) => {
    const [pw, ph] = [Math.ceil(w * z), Math.ceil(h * z)];
    return pw <= MAX_PNG_SIDE && ph <= MAX_PNG_SIDE && pw * ph <= MAX_PNG_PIXELS;
  };
  while (!fits(zoom)) zoom *= 0.999;
  return zoom;
}

/** The drawing's size at scale 1: the outer `<svg>` element's `width` and `height`, else its `viewBox`. */
export function svgSize(svg: string): { width: number; height: number } {
  const open = /<svg\b[^>]*>/.exec(svg)?.[0] ?? '';
  const attribute = (name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(open)?.[1];
  let width = Number(attribute('width'));
  let height = Number(attribute('height'));
  if (!(width > 0 && height > 0)) {
    const box = (attribute('viewBox') ?? '')
      .trim()
      .split(/[\s,]+/)
      .map(Number);
    [width, height] = [box[2] ?? Number.NaN, box[3] ?? Number.NaN];
  }
  if (!(width > 0 && height > 0)) throw new Error('The drawing has no size: neither width and height nor a viewBox.');
  return { width, height };
}

/** PNG bytes of `svg` at `scale` (1: one pixel per SVG unit), within MAX_PNG_PIXELS and MAX_PNG_SIDE. */
export async function renderPng(svg: string, scale = 1, timeoutMs = DEFAULT_PNG_TIMEOUT): Promise<Buffer> {
  const { width, height } = svgSize(svg);
  const task: PngTask = { svg, zoom: boundedZoom(width, height, scale), fontFiles: pngFonts() };
  const outcome = await renderers.run<{ id: number; png?: Uint8Array; error?: string }>(task, timeoutMs);
  switch (outcome.kind) {
    case 'answer':
      if (outcome.message.png)
        return Buffer.from(outcome.message.png.buffer, outcome.message.png.byteOffset, outcome.message.png.byteLength);
      throw new Error(`PNG rendering failed: ${outcome.message.error ?? 'no result'}`);
    case 'error':
      throw new Error(`PNG rendering failed: ${outcome.error.message}`);
    case 'exit':
      throw new Error('PNG rendering failed: the renderer stopped (resvg ended its process; see the server’s standard error)');
    case 'timeout':
      throw new ApiError(
        503,
        `Drawing the PNG took longer than ${timeoutMs / 1000} s and was cancelled; ask for a smaller scale or use the SVG.`,
      );
  }
}
