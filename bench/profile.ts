/**
 * Summarizes a V8 CPU profile (`node --cpu-prof`, or `npm run bench -- --profile DIR`):
 * self and inclusive time per function, optionally only over the last `--last MS` of the
 * profile (the measured window, without start-up and module loading).
 *
 *   node --import=tsx bench/profile.ts PROFILE.cpuprofile [--top 40] [--last 5000] [--match writeNow]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileSummary {
  totalMs: number;
  self: Array<[string, number]>;
  inclusive: Array<[string, number]>;
}

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url.includes('/node_modules/')
    ? url.slice(url.lastIndexOf('/node_modules/') + '/node_modules/'.length)
    : url.replace(/^file:\/\//, '').replace(/^.*\/(src|dist|bench)\//, '$1/');
  return `${functionName || '(anonymous)'} ${file}${lineNumber >= 0 ? `:${lineNumber + 1}` : ''}`;
}

export function summarizeProfile(profile: CpuProfile, lastMs = Infinity): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  // Sample times, to keep only the window at the end.
  const times: number[] = [];
  let t = profile.startTime;
  for (const delta of profile.timeDeltas) times.push((t += delta));
  const from = profile.endTime - lastMs * 1000;
  const perNode = new Map<number, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    if (times[i]! < from) return;
    const delta = profile.timeDeltas[i + 1] ?? 0;
    perNode.set(id, (perNode.get(id) ?? 0) + delta);
    total += delta;
  });
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, us] of perNode) {
    const name = frameName(byId.get(id)!);
    self.set(name, (self.get(name) ?? 0) + us);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = frameName(byId.get(at)!);
      if (seen.has(frame)) continue;
      seen.add(frame);
      inclusive.set(frame, (inclusive.get(frame) ?? 0) + us);
    }
  }
  const sorted = (m: Map<string, number>) => [...m].map(([k, us]): [string, number] => [k, us / 1000]).sort((a, b) => b[1] - a[1]);
  return { totalMs: total / 1000, self: sorted(self), inclusive: sorted(inclusive) };
}

export function formatSummary(summary: ProfileSummary, top = 30, match?: RegExp): string {
  const lines = (rows: Array<[string, number]>) =>
    rows
      .filter(([name]) => !match || match.test(name))
      .slice(0, top)
      .map(([name, ms]) => `${ms.toFixed(0).padStart(8)} ms ${((100 * ms) / summary.totalMs).toFixed(1).padStart(5)}%  ${name}`)
      .join('\n');
  return `${summary.totalMs.toFixed(0)} ms sampled\n--- self time\n${lines(summary.self)}\n--- inclusive time\n${lines(summary.inclusive)}`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string' }, last: { type: 'string' }, match: { type: 'string' } },
  });
  for (const file of positionals) {
    const summary = summarizeProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, values.last ? Number(values.last) : Infinity);
    console.log(
      `${file}\n${formatSummary(summary, values.top ? Number(values.top) : 30, values.match ? new RegExp(values.match) : undefined)}\n`,
    );
  }
}
