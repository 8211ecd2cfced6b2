import { drawDiagram } from '../src/drawing/svg.js';
import { fortyInstanceDiagram } from './viewer.js';
const { model, diagram } = fortyInstanceDiagram();
const t0 = performance.now(); while (performance.now() - t0 < 3000) drawDiagram(diagram, model);
const xs: number[] = []; for (let i = 0; i < 400; i++) { const t = performance.now(); drawDiagram(diagram, model); xs.push(performance.now() - t); }
xs.sort((a, b) => a - b); console.log('median', xs[200]!.toFixed(2));
