/**
 * How the service's code is bundled: by scripts/build.mjs into dist/, and by the benchmark's
 * measurements that must run the code as the service runs it (bench/viewer.ts).
 */
export const BUNDLE_OPTIONS = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // resvg is a native addon: it cannot be bundled. isomorphic-git is imported on first use only.
  external: ['isomorphic-git', '@resvg/resvg-js'],
  // CommonJS dependencies (koa, proper-lockfile) call require(); an ES module has none of its own.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  logLevel: 'warning',
};
