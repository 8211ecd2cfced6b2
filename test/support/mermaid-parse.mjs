// Parses Mermaid texts with Mermaid's own parser (the npm package `mermaid`), outside a browser:
// Mermaid sanitizes labels with DOMPurify, which needs a DOM, so jsdom provides one. Run as a
// child process so these globals never leak into a test. Prints, per file, the parsed C4 shapes,
// relations and boundaries as JSON; exits 1 on the first text Mermaid refuses.
import { readFileSync } from 'node:fs';
import { JSDOM } from 'jsdom';

const dom = new JSDOM('');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');

const results = [];
for (const file of process.argv.slice(2)) {
  const text = readFileSync(file, 'utf8');
  try {
    const { diagramType } = await mermaid.parse(text);
    const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
    const db = diagram.db;
    results.push({
      file,
      diagramType,
      shapes: db.getC4ShapeArray().map((s) => ({ alias: s.alias, label: s.label.text, descr: s.descr?.text ?? '' })),
      rels: db.getRels().map((r) => ({ from: r.from, to: r.to, label: r.label.text })),
      boundaries: db.getBoundaries('global').map((b) => ({ alias: b.alias, label: b.label.text })),
    });
  } catch (err) {
    console.error(`${file}: ${err.message}`);
    process.exit(1);
  }
}
console.log(JSON.stringify(results));
