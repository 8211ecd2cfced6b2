/**
 * Bundles the service into dist/: one file for the command line and server, one for each
 * worker thread and child process, and the chunks they share. Node then loads a handful of modules instead of
 * ~300 (typebox alone is ~150 small files): start-up spends ~110 ms in module loading instead
 * of ~390 ms. Split into chunks, code imported on first use only (the MCP SDK with its schema
 * libraries, a fifth of the code) is not even compiled by a process that never uses it:
 * `c4store --help` 0.35 → 0.27 s.
 *
 * Types are checked by `npm run typecheck` (tsc); esbuild only strips them.
 * isomorphic-git stays outside the bundle: it is imported on first use only (packed objects),
 * so most processes never load it at all.
 */
import { build } from 'esbuild';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { BUNDLE_OPTIONS } from './bundle-options.mjs';

await rm('dist', { recursive: true, force: true });
await build({
  // The name of this code (src/service/model-cache.ts): a model cache written by other code is never read.
  define: { 'process.env.C4STORE_CODE_ID': JSON.stringify(await codeId()) },
  // Workers and child processes are entry points of their own, beside cli.js (src/threads.ts finds them there).
  entryPoints: {
    cli: 'src/cli.ts',
    'yaml-worker': 'src/http/yaml-worker.ts',
    'loose-reader-worker': 'src/store/loose-reader-worker.ts',
    'layout-worker': 'src/layout/layout-worker.ts',
    'png-process': 'src/drawing/png-process.ts',
    'draw-worker': 'src/drawing/draw-worker.ts',
  },
  outdir: 'dist',
  ...BUNDLE_OPTIONS,
  splitting: true,
  sourcemap: true,
});
// The viewer's stylesheet and scripts beside the bundle, as they sit beside src/viewer/assets.ts:
// dist/ then runs without src/ (an image that copies only dist/ and node_modules/).
await cp('src/viewer/static', 'dist/static', { recursive: true });

// docs/openapi.json is the document the built service serves, committed so it can be read and
// diffed without running anything (test/openapi.test.ts fails when it is stale).
const { stdout } = await promisify(execFile)(process.execPath, ['dist/cli.js', 'openapi']);
await writeFile('docs/openapi.json', stdout);

/** A hash of every source file and of the lockfile (the dependencies' exact versions). */
async function codeId() {
  const hash = createHash('sha256');
  const files = (await readdir('src', { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => `${entry.parentPath ?? entry.path}/${entry.name}`)
    .sort();
  for (const file of [...files, 'package-lock.json'])
    hash
      .update(`${file}\0`)
      .update(await readFile(file))
      .update('\0');
  return hash.digest('hex').slice(0, 32);
}
