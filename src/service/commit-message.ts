import type { Change } from '../model/draft.js';

/**
 * `POST /api/external/component: create 2, update 1` (`, delete 1` where files go), a blank line, one line per touched
 * file, and an `Api-Context:` trailer per distinct apiContext, so `git log` reads as a
 * changelog of the architecture.
 */
export function commitMessage(title: string, changes: readonly Change[], apiContext: string): string {
  const count = (action: Change['action']) => changes.filter((c) => c.action === action).length;
  const summary = [['create', count('create')], ['update', count('update')], ['delete', count('delete')]]
    .filter(([, n]) => n !== 0)
    .map(([action, n]) => `${action} ${n}`)
    .join(', ');
  const lines = changes.map((c) => `${c.action} ${c.path} (${oneLine(c.label)})`);
  const contexts = new Set(changes.map((c) => c.apiContext ?? apiContext));
  const trailers = [...contexts].map((context) => `Api-Context: ${oneLine(context)}`);
  return `${title}: ${summary}\n\n${lines.join('\n')}\n\n${trailers.join('\n')}\n`;
}

function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ');
}
