/**
 * The viewer's stylesheet and script, plain files served as they are (no front-end build).
 * They sit in static/ beside this module, and the build copies them beside the bundle.
 */
import { readFileSync } from 'node:fs';

const STATIC_DIR = new URL('./static/', import.meta.url);

export interface Asset {
  type: string;
  body: Buffer;
}

const cache = new Map<string, Asset>();

export function asset(name: 'viewer.css' | 'viewer.js' | 'live.js'): Asset {
  let found = cache.get(name);
  if (!found) {
    found = {
      type: name.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8',
      body: readFileSync(new URL(name, STATIC_DIR)),
    };
    cache.set(name, found);
  }
  return found;
}
