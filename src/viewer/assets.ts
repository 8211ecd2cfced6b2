/**
 * The viewer's stylesheet and script, plain files served as they are (no front-end build).
 * From source they sit beside this module; built, dist/cli.js finds them in the package's src/.
 */
import { readFileSync } from 'node:fs';

const STATIC_DIR = import.meta.url.endsWith('.ts')
  ? new URL('./static/', import.meta.url)
  : new URL('../src/viewer/static/', import.meta.url);

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
