// Parses Mermaid texts with Mermaid's own parser (the npm package `mermaid`), outside a browser:
// Mermaid sanitizes labels with DOMPurify, which needs a DOM, so jsdom provides one. Run as a
// child process so these globals never leak into a test. Prints, per file, the parsed C4 shapes,
// relations and boundaries, and the configuration the text made Mermaid apply (what its
// `%%{init}%%` directives and front matter set: theme, CSS, fonts), as JSON; exits 1 on the first
// text Mermaid refuses.
import { readFileSync } from 'node:fs';
import { JSDOM } from 'jsdom';

const dom = new JSDOM('');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');

/** Every boundary, nested ones too (the parser keeps them by parent). */
function allBoundaries(db) {
  const found = [];
  const visit = (parent) => {
    for (const b of db.getBoundaries(parent)) {
      found.push(b);
      visit(b.alias);
    }
  };
  visit('global');
  return found;
}

const results = [];
for (const file of process.argv.slice(2)) {
  const text = readFileSync(file, 'utf8');
  try {
    const { diagramType } = await mermaid.parse(text);
    const applied = mermaid.mermaidAPI.getConfig();
    const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
    const db = diagram.db;
    results.push({
      file,
      diagramType,
      title: db.getTitle?.() ?? db.getDiagramTitle?.() ?? '',
      config: { theme: applied.theme, themeCSS: applied.themeCSS ?? '', fontFamily: applied.fontFamily },
      layout: { shapeInRow: db.getC4ShapeInRow(), boundaryInRow: db.getC4BoundaryInRow() },
      shapes: db.getC4ShapeArray().map((s) => ({
        alias: s.alias,
        type: s.typeC4Shape?.text ?? '',
        label: s.label.text,
        descr: s.descr?.text ?? '',
        techn: s.techn?.text ?? '',
        parent: s.parentBoundary,
        tags: s.tags?.text ?? s.tags ?? '',
        fontColor: s.fontColor ?? '',
      })),
      rels: db.getRels().map((r) => ({ from: r.from, to: r.to, label: r.label.text, descr: r.descr?.text ?? '' })),
      boundaries: allBoundaries(db).map((b) => ({ alias: b.alias, label: b.label.text, parent: b.parentBoundary })),
    });
  } catch (err) {
    console.error(`${file}: ${err.message}`);
    process.exit(1);
  }
}
console.log(JSON.stringify(results));
