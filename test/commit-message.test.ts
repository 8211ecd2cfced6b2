/**
 * Issue 16 point 8: control characters from names and apiContext must not reach a reviewer's
 * terminal through `git log`; the YAML files keep the exact text.
 */
import test from 'ava';
import YAML from 'yaml';
import { resourcePath } from '../src/model/paths.js';
import { commitMessage } from '../src/service/commit-message.js';
import { withServer } from './support/server.js';

const ESC = '\u001b';
const NAME = `Evil${ESC}[2J${ESC}]0;pwned\u0007 \u009b31m\u202Egnp.exe\tok`;
const CONTEXT = `ci${ESC}[31m run\u0000 7`;

test('names and apiContext with ESC, BEL, C1 and bidi controls: escaped in the commit message, exact in the files', async (t) => {
  await withServer(async (s) => {
    const reply = await s.post('/api/external/component', [{ ref: 'evil', name: NAME, typeSlug: 'container', apiContext: CONTEXT }]);
    t.is(reply.status, 200, reply.text);
    const message = await s.git('log', '-1', '--format=%B', 'main');
    t.false(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/.test(message), JSON.stringify(message));
    t.true(message.includes('Evil\\u001b[2J\\u001b]0;pwned\\u0007 \\u009b31m\\u202egnp.exe\tok'), message);
    t.true(message.includes('Api-Context: ci\\u001b[31m run\\u0000 7'), message);

    const id = reply.body[0].id as string;
    const file = await s.git('show', `main:${resourcePath('component', id)}`);
    const stored = YAML.parse(file) as { name: string; apiContext: string };
    t.is(stored.name, NAME);
    t.is(stored.apiContext, CONTEXT);
    const read = await s.get(`/api/external/component/${id}`);
    t.is(read.body.name, NAME);
  });
});

test('line breaks still fold to one line, and plain text is unchanged', (t) => {
  const message = commitMessage(
    'POST /api/external/tag',
    [{ kind: 'tag', id: 'x', action: 'create', path: 'tags/x.yaml', label: 'A\r\nB ü 名前', content: '' }],
    'ctx',
  );
  t.is(message, 'POST /api/external/tag: create 1\n\ncreate tags/x.yaml (A B ü 名前)\n\nApi-Context: ctx\n');
});

// The router takes a path with a trailing slash as the path without it; the commit title (and
// the change feed, history and events that show it) named the path as sent, and a draft opened
// at `/drafts/` answered `Location: /api/external/drafts//<name>`, an address that is no draft's.
test('a write to a path with a trailing slash is titled by its path, and a draft made there is located at its own address', async (t) => {
  await withServer(async (s) => {
    const tag = await s.post('/api/external/tag/', [{ name: 'Slash', color: 'red' }]);
    t.is(tag.status, 200, tag.text);
    t.is((await s.git('log', '-1', '--format=%s', 'main')).trim(), 'POST /api/external/tag: create 1');
    const current = await s.post('/api/external/tags/', { name: 'Slash too', color: 'red' });
    t.is(current.status, 201, current.text);
    t.is((await s.git('log', '-1', '--format=%s', 'main')).trim(), 'POST /api/external/tags: create 1');
    const draft = await s.post('/api/external/drafts/', { name: 'slashed' });
    t.is(draft.status, 201, draft.text);
    t.is(draft.headers.get('location'), '/api/external/drafts/slashed');
    t.is((await s.get(draft.headers.get('location')!)).status, 200);
  });
});
