import type { Change } from '../model/draft.js';

/**
 * `POST /api/external/component: create 2, update 1` (`, delete 1` where files go), a blank line, one line per touched
 * file, and an `Api-Context:` trailer per distinct apiContext, so `git log` reads as a
 * changelog of the architecture.
 *
 * Writes made by people (a drop or an edit in the viewer, a revert, the command line) are
 * titled as they would say it (`Moved 'Web Shop' on 'Shop - Containers'`): `spoken` replaces
 * the request line and its counts, and the one trailer is the request's own (a revert restores
 * files with the apiContext they had then, which is not this commit's). `trailers` end the
 * message besides (`Agent: <MCP client>`).
 */
export function commitMessage(
  title: string,
  changes: readonly Change[],
  apiContext: string,
  { spoken, trailers = [] }: { spoken?: string; trailers?: readonly string[] } = {},
): string {
  const lines = changes.map((c) => `${c.action} ${c.path} (${oneLine(c.label)})`);
  const extra = trailers.map((trailer) => `\n${oneLine(trailer)}`).join('');
  if (spoken !== undefined) return `${oneLine(spoken)}\n\n${lines.join('\n')}\n\nApi-Context: ${oneLine(apiContext)}${extra}\n`;
  const count = (action: Change['action']) => changes.filter((c) => c.action === action).length;
  const summary = [
    ['create', count('create')],
    ['update', count('update')],
    ['delete', count('delete')],
  ]
    .filter(([, n]) => n !== 0)
    .map(([action, n]) => `${action} ${n}`)
    .join(', ');
  const contexts = new Set(changes.map((c) => c.apiContext ?? apiContext));
  const contextTrailers = [...contexts].map((context) => `Api-Context: ${oneLine(context)}`);
  return `${oneLine(title)}: ${summary}\n\n${lines.join('\n')}\n\n${contextTrailers.join('\n')}${extra}\n`;
}

/**
 * Control characters other than line breaks and tab: C0 (ESC, BEL, …), DEL, C1 (0x9B is a one-byte
 * CSI on some terminals), and the bidirectional overrides and isolates that reorder what a
 * reviewer sees ("Trojan Source", CVE-2021-42574).
 */
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * One line of a commit message from client text. Names and apiContext may hold any character
 * (the YAML files keep them exactly), but `git log` writes the message raw to a terminal, where
 * an ESC sequence would run: each control character is written as its `\u` escape instead.
 */
export function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').replace(TERMINAL_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
