import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * The real tools of each export format, as the tests run them: LikeC4's CLI and Mermaid's
 * parser from npm (dev dependencies), PlantUML from Debian.
 */

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'node_modules', '.bin');

export interface ToolRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a tool; its exit code and output. The default timeout is generous: a JVM or LikeC4's
 * language server on a busy 2-core machine can take minutes, and a kill is not a verdict.
 */
export async function tool(command: string, args: string[], options: { timeout?: number; cwd?: string } = {}): Promise<ToolRun> {
  try {
    const { stdout, stderr } = await exec(command, args, {
      timeout: options.timeout ?? 600_000,
      maxBuffer: 64 * 1024 * 1024,
      cwd: options.cwd,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number | string; stdout?: string; stderr?: string; message: string };
    if (typeof e.code !== 'number') throw err;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? e.message };
  }
}

/** `likec4 validate DIR`: syntax, references and layout of every `.c4` file in DIR. */
export const likec4Validate = (dir: string) => tool(join(BIN, 'likec4'), ['validate', '--no-layout', dir]);

/** The model LikeC4 read from project `project` of the workspace DIR, as its own JSON export. */
export async function likec4Model(
  dir: string,
  project: string,
): Promise<{
  elements: Record<string, { title: string; description?: { txt: string } }>;
  views: Record<string, unknown>;
  relations: Record<string, { title?: string }>;
}> {
  const out = join(dir, `${project}.json`);
  const run = await tool(join(BIN, 'likec4'), ['export', 'json', '--skip-layout', '-p', project, '-o', out, dir]);
  if (run.code !== 0) throw new Error(`likec4 export json failed: ${run.stderr}`);
  const { readFile } = await import('node:fs/promises');
  return JSON.parse(await readFile(out, 'utf8'));
}

export interface MermaidParse {
  file: string;
  diagramType: string;
  /** The diagram's title as Mermaid keeps it (entity codes as markers). */
  title: string;
  /** What the text made Mermaid apply: directives and front matter. */
  config: { theme: string; themeCSS: string; fontFamily: string };
  /** What `UpdateLayoutConfig` set. */
  layout: { shapeInRow: number; boundaryInRow: number };
  shapes: Array<{
    alias: string;
    type: string;
    label: string;
    descr: string;
    techn: string;
    parent: string;
    tags: string;
    fontColor: string;
  }>;
  rels: Array<{ from: string; to: string; label: string; descr: string }>;
  boundaries: Array<{ alias: string; label: string; parent: string }>;
}

/** Mermaid's own parser over each file (test/support/mermaid-parse.mjs). */
export async function mermaidParse(files: string[]): Promise<{ code: number; stderr: string; parsed: MermaidParse[] }> {
  const run = await tool(process.execPath, [join(import.meta.dirname, 'mermaid-parse.mjs'), ...files]);
  return { code: run.code, stderr: run.stderr, parsed: run.code === 0 ? JSON.parse(run.stdout) : [] };
}

/** Mermaid keeps entity codes as markers until it draws; what a reader then sees. */
export function mermaidShown(text: string): string {
  const named: Record<string, string> = { quot: '"', lt: '<', gt: '>', amp: '&', apos: "'" };
  return text
    .replace(/ﬂ°°(\d+)¶ß/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/ﬂ°(\w+)¶ß/g, (_, name: string) => named[name] ?? `&${name};`)
    .replace(/<br\s*\/?>/g, '\n');
}

let plantuml: Promise<string | undefined> | undefined;

/**
 * PlantUML from Debian, installed when missing. Resolves to the reason it cannot be had, so
 * a test can say so loudly instead of passing silently.
 */
export function plantumlMissing(): Promise<string | undefined> {
  plantuml ??= (async () => {
    if ((await tool('sh', ['-c', 'command -v plantuml'])).code === 0) return undefined;
    const apt = (...args: string[]) => tool('apt-get', ['-o', 'DPkg::Lock::Timeout=300', ...args], { timeout: 600_000 });
    let install = await apt('install', '-y', 'plantuml');
    // A fresh machine has no package lists yet.
    if (install.code !== 0 && (await apt('update')).code === 0) install = await apt('install', '-y', 'plantuml');
    if ((await tool('sh', ['-c', 'command -v plantuml'])).code === 0) return undefined;
    return `plantuml is not installed and apt-get install failed: ${install.stderr.slice(-500)}`;
  })();
  return plantuml;
}

/** `plantuml -checkonly`: PlantUML's syntax check of every diagram in the files (exit 0 when all are valid). */
export const plantumlCheck = (files: string[]) => tool('plantuml', ['-checkonly', '-failfast2', ...files]);

/** Renders the files to SVG beside them; the drawn text is what a reader sees. */
export const plantumlSvg = (files: string[]) => tool('plantuml', ['-tsvg', '-failfast2', ...files]);

/**
 * `text` read by a real XML parser (jsdom's DOMParser, `image/svg+xml`): the parser's error if it
 * refuses the text, the root element's name and the content of every `<text>` element.
 */
export async function parseSvg(text: string): Promise<{ error: string | null; root: string; texts: string[] }> {
  // jsdom ships no type declarations; only these few members are used.
  interface Node {
    localName: string;
    textContent: string | null;
  }
  interface XmlDocument {
    documentElement: Node;
    getElementsByTagName(name: string): ArrayLike<Node>;
  }
  const { JSDOM } = (await import('jsdom' as string)) as {
    JSDOM: new (html: string) => { window: { DOMParser: new () => { parseFromString(text: string, type: string): XmlDocument } } };
  };
  const document = new new JSDOM('').window.DOMParser().parseFromString(text, 'image/svg+xml');
  const errors = document.getElementsByTagName('parsererror');
  return {
    error: errors.length > 0 ? (errors[0].textContent ?? 'parsererror') : null,
    root: document.documentElement.localName,
    texts: Array.from(document.getElementsByTagName('text'), (e) => e.textContent ?? ''),
  };
}
