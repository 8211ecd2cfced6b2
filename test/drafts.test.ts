import test from 'ava';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type DraftEvent, onDraftEvent } from '../src/drafts/events.js';
import { resourcePath } from '../src/model/paths.js';
import { type TestServer, withServer } from './support/server.js';

// Drafts over real HTTP on a real repository, inspected with git itself (CONTRACT §8).

const API = '/api/external';

async function ref(s: TestServer, name: string): Promise<string | null> {
  try {
    return (await s.git('rev-parse', '--verify', '--quiet', name)).trim();
  } catch {
    return null;
  }
}

async function open(s: TestServer, name: string, extra: Record<string, unknown> = {}) {
  const reply = await s.post(`${API}/drafts`, { name, ...extra });
  if (reply.status !== 201) throw new Error(`open ${name}: ${reply.status} ${reply.text}`);
  return reply.body;
}

test('opening a draft makes a branch at main and no commit; its writes never touch main', (t) =>
  withServer(async (s) => {
    const main = await s.head();
    const count = await s.commitCount();
    const draft = await open(s, 'payments-v2', { title: 'Payments v2', desc: 'Split the ledger' });
    t.like(draft, {
      name: 'payments-v2',
      title: 'Payments v2',
      desc: 'Split the ledger',
      state: 'open',
      base: main,
      head: main,
      author: 'test pipeline',
    });
    t.regex(draft.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    t.is(await ref(s, 'refs/heads/drafts/payments-v2'), main);
    t.is(await s.commitCount(), count);

    // A write of the seed's form, then one of the current form, each one commit on the draft's branch.
    const written = await s.post(`${API}/component?draft=payments-v2`, [{ ref: 'ledger', name: 'Ledger' }]);
    t.is(written.status, 200, written.text);
    const head = await ref(s, 'refs/heads/drafts/payments-v2');
    t.is(written.headers.get('etag'), `"${head}"`);
    t.is((await s.git('rev-parse', `${head}^`)).trim(), main);
    const current = await s.post(`${API}/components?draft=payments-v2`, { id: 'fraud', name: 'Fraud Check' });
    t.is(current.status, 201, current.text);
    t.is(await s.head(), main, 'main never moves');
    t.is(await s.commitCount(), count);
    t.is((await s.git('rev-list', '--count', 'main..drafts/payments-v2')).trim(), '2');

    // Reads: the draft's model with ?draft=, main's without.
    const inDraft = await s.get(`${API}/component?draft=payments-v2`);
    t.deepEqual(inDraft.body.map((c: { name: string }) => c.name).sort(), ['Fraud Check', 'Ledger']);
    t.is(inDraft.headers.get('etag'), `"${await ref(s, 'refs/heads/drafts/payments-v2')}"`);
    t.deepEqual((await s.get(`${API}/component`)).body, []);
    t.is((await s.get(`${API}/components/fraud?draft=payments-v2`)).body.name, 'Fraud Check');
    t.is((await s.get(`${API}/components/fraud`)).status, 404);

    // The same write again: no commit.
    const tip = await ref(s, 'refs/heads/drafts/payments-v2');
    t.is((await s.post(`${API}/component?draft=payments-v2`, [{ ref: 'ledger', name: 'Ledger' }])).status, 200);
    t.is(await ref(s, 'refs/heads/drafts/payments-v2'), tip);
    // A delete, a template and a YAML write of the current form: on the draft too.
    t.is((await s.request('DELETE', `${API}/components/fraud?draft=payments-v2`)).status, 200);
    t.is((await s.get(`${API}/components/fraud?draft=payments-v2`)).status, 404);
    const yaml = await s.request('POST', `${API}/tags?draft=payments-v2`, { body: { id: 'pci', name: 'PCI', color: 'red' }, yaml: true });
    t.is(yaml.status, 201, yaml.text);
    t.is(await s.head(), main, 'main never moves');
    t.is((await s.git('rev-list', '--count', 'main..drafts/payments-v2')).trim(), '4');
    await s.git('fsck', '--strict');
  }));

test('If-Match names the draft head; reader keys read drafts only; unknown and bad names are refused', (t) =>
  withServer(async (s) => {
    const main = await s.head();
    await open(s, 'ci');
    const first = await s.post(`${API}/component?draft=ci`, [{ ref: 'a', name: 'A' }]);
    const head = first.headers.get('etag')!;
    const stale = await s.post(`${API}/component?draft=ci`, [{ ref: 'b', name: 'B' }], { headers: { 'if-match': `"${main}"` } });
    t.is(stale.status, 412);
    t.deepEqual(stale.body, { error: `The model has changed since ${main}.` });
    // If-None-Match names the draft's head too: main's commit is not where the draft is.
    const unchanged = await s.post(`${API}/component?draft=ci`, [{ ref: 'b', name: 'B' }], { headers: { 'if-none-match': head } });
    t.is(unchanged.status, 412);
    t.deepEqual(unchanged.body, { error: `The model is still at ${head.replaceAll('"', '')}.` });
    const fresh = await s.post(`${API}/component?draft=ci`, [{ ref: 'b', name: 'B' }], {
      headers: { 'if-match': head, 'if-none-match': `"${main}"` },
    });
    t.is(fresh.status, 200, fresh.text);
    const mergeUnchanged = await s.post(`${API}/drafts/ci/merge`, {}, { headers: { 'if-none-match': `"${main}"` } });
    t.deepEqual(mergeUnchanged.body, { error: `The model is still at ${main}.` });
    t.is(await s.head(), main);

    const reader = { key: s.readerKey };
    t.is((await s.get(`${API}/component?draft=ci`, reader)).body.length, 2);
    t.is((await s.get(`${API}/drafts/ci`, reader)).status, 200);
    for (const [method, path] of [
      ['POST', `${API}/component?draft=ci`],
      ['POST', `${API}/drafts`],
      ['POST', `${API}/drafts/ci/merge`],
      ['DELETE', `${API}/drafts/ci`],
    ]) {
      const reply = await s.request(method, path, { ...reader, body: method === 'POST' ? { name: 'x' } : undefined });
      t.is(reply.status, 403, `${method} ${path}`);
      t.deepEqual(reply.body, { error: 'This API key may only read.' });
    }

    const missing = await s.post(`${API}/component?draft=nope`, [{ name: 'X' }]);
    t.is(missing.status, 404);
    t.deepEqual(missing.body, { error: "Draft 'nope' does not exist." });
    t.deepEqual((await s.get(`${API}/component?draft=nope`)).body, { error: "Draft 'nope' does not exist." });
    t.is((await s.get(`${API}/component?draft=Bad..Name`)).status, 400);
    t.is((await s.post(`${API}/drafts`, { name: '../main' })).status, 400);
    const namedMain = await s.post(`${API}/drafts`, { name: 'main' });
    t.is(namedMain.status, 400);
    t.deepEqual(namedMain.body, { error: "Invalid draft name 'main': it names the main branch; choose another." });
    t.deepEqual((await s.post(`${API}/drafts`, { name: 'ci' })).body, { error: "Draft 'ci' already exists." });
    t.is(await s.head(), main);
  }));

test('a draft shows its changes, how far behind main it is and its conflicts; merge settles them in one merge commit', (t) =>
  withServer(async (s) => {
    await s.post(`${API}/components`, { id: 'pay', name: 'Payments' });
    await s.post(`${API}/components`, { id: 'db', name: 'DB' });
    const base = await s.head();
    await open(s, 'payments-v2', { title: 'Payments v2' });
    await s.request('PATCH', `${API}/components/pay?draft=payments-v2`, { body: { name: 'Payments Hub', desc: 'All money' } });
    await s.post(`${API}/components?draft=payments-v2`, { id: 'fraud', name: 'Fraud Check' });

    let details = (await s.get(`${API}/drafts/payments-v2`)).body;
    t.like(details, { base, behind: 0, conflicts: [] });
    t.deepEqual(details.changes.added, [{ kind: 'component', id: 'fraud', name: 'Fraud Check' }]);
    t.deepEqual(
      details.changes.changed.map((c: { id: string; fields: Array<{ field: string }> }) => [
        c.id,
        c.fields.map((f) => f.field).filter((field) => field !== 'apiContext'),
      ]),
      [['pay', ['name', 'desc']]],
    );
    const diff = (await s.get(`${API}/drafts/payments-v2/diff`)).body;
    t.is(diff.from, base);
    t.deepEqual(diff.added, details.changes.added);

    // main moves on: the same field differently, and another field alone.
    await s.request('PATCH', `${API}/components/pay`, { body: { name: 'Payment Service' } });
    await s.request('PATCH', `${API}/components/db`, { body: { desc: 'Postgres' } });
    details = (await s.get(`${API}/drafts/payments-v2`)).body;
    t.is(details.behind, 2);
    t.deepEqual(details.conflicts, [
      {
        kind: 'component',
        id: 'pay',
        name: 'Payments Hub',
        field: 'name',
        base: 'Payments',
        main: 'Payment Service',
        draft: 'Payments Hub',
      },
    ]);

    const mainBefore = await s.head();
    const refusal = await s.post(`${API}/drafts/payments-v2/merge`, {});
    t.is(refusal.status, 409);
    t.is(refusal.body.error, "Draft 'payments-v2' conflicts with main on 1 field; settle each with a resolution.");
    t.deepEqual(refusal.body.conflicts, details.conflicts);
    t.is(await s.head(), mainBefore, 'a refused merge changes nothing');

    const resolutions = details.conflicts.map((c: { kind: string; id: string; field: string }) => ({
      kind: c.kind,
      id: c.id,
      field: c.field,
      take: 'draft',
    }));
    const merged = await s.post(`${API}/drafts/payments-v2/merge`, { resolutions });
    t.is(merged.status, 200, merged.text);
    const mergeCommit = await s.head();
    t.like(merged.body, { name: 'payments-v2', state: 'merged', commit: mergeCommit, committed: true });
    t.is(merged.headers.get('etag'), `"${mergeCommit}"`);
    const draftHead = (await s.git('rev-parse', 'refs/drafts-merged/payments-v2')).trim();
    t.is((await s.git('rev-parse', `${mergeCommit}^1`)).trim(), mainBefore, 'first parent: main');
    t.is((await s.git('rev-parse', `${mergeCommit}^2`)).trim(), draftHead, 'second parent: the draft');
    t.is(await ref(s, 'refs/heads/drafts/payments-v2'), null, 'the branch is gone from refs/heads');
    t.is((await s.git('log', '-1', '--format=%s')).trim(), "Merged draft 'payments-v2': create 1, update 1");
    const graph = await s.git('log', '--graph', '--oneline', 'main');
    t.regex(graph, /\* {3}[0-9a-f]+ Merged draft 'payments-v2'/);
    t.regex(graph, /\|\\/);

    // Both sides' work is in main: the draft's name and desc, main's DB desc, the new component.
    const pay = (await s.get(`${API}/components/pay`)).body;
    t.like(pay, { name: 'Payments Hub', desc: 'All money' });
    t.is((await s.get(`${API}/components/db`)).body.desc, 'Postgres');
    t.is((await s.get(`${API}/components/fraud`)).body.name, 'Fraud Check');
    await s.git('fsck', '--strict');

    // Merged: listed as such, read as it was left, written no more.
    t.deepEqual((await s.get(`${API}/drafts`)).body, []);
    t.like((await s.get(`${API}/drafts?state=merged`)).body[0], { name: 'payments-v2', state: 'merged', mergeCommit });
    t.is((await s.get(`${API}/components/fraud?draft=payments-v2`)).status, 200);
    const late = await s.post(`${API}/component?draft=payments-v2`, [{ name: 'Late' }]);
    t.is(late.status, 409);
    t.deepEqual(late.body, { error: "Draft 'payments-v2' is merged; open a new draft for further changes." });
  }));

test("a conflict's values are in the shape the API's GETs give: a whole component with its typeSlug, a diagram's tags as tag objects", (t) =>
  withServer(async (s) => {
    t.is((await s.post(`${API}/tags`, { id: 'pci', name: 'PCI', color: 'red' })).status, 201);
    t.is((await s.post(`${API}/tags`, { id: 'gdpr', name: 'GDPR', color: 'blue' })).status, 201);
    t.is((await s.post(`${API}/components`, { id: 'pay', name: 'Payments', typeSlug: 'container' })).status, 201);
    t.is((await s.post(`${API}/diagrams`, { id: 'c2', name: 'C2', level: 'C2' })).status, 201);
    const base = await s.head();
    await open(s, 'clash');
    // The draft deletes the component and tags the diagram PCI; main renames it and tags the diagram GDPR.
    t.is((await s.request('DELETE', `${API}/components/pay?draft=clash`)).status, 200);
    t.is((await s.request('PATCH', `${API}/diagrams/c2?draft=clash`, { body: { tags: ['pci'] } })).status, 200);
    t.is((await s.request('PATCH', `${API}/components/pay`, { body: { name: 'Payment Service' } })).status, 200);
    t.is((await s.request('PATCH', `${API}/diagrams/c2`, { body: { tags: ['gdpr'] } })).status, 200);

    const tag = async (id: string) => (await s.get(`${API}/tag`)).body.find((tag: { id: string }) => tag.id === id);
    const component = async (at: string) => (await s.get(`${API}/component/pay?at=${at}`)).body;
    t.like(await component(base), { typeSlug: 'container' }, 'the seed form’s GET carries typeSlug');
    const expected = [
      {
        kind: 'component',
        id: 'pay',
        name: 'Payment Service',
        field: '*',
        base: await component(base),
        main: await component(await s.head()),
        draft: null,
      },
      { kind: 'diagram', id: 'c2', name: 'C2', field: 'tags', base: [], main: [await tag('gdpr')], draft: [await tag('pci')] },
    ];
    const refusal = await s.post(`${API}/drafts/clash/merge`, {});
    t.is(refusal.status, 409, refusal.text);
    t.deepEqual(refusal.body.conflicts, expected);
    t.deepEqual((await s.get(`${API}/drafts/clash`)).body.conflicts, expected);
    // Settled by the same kind, id and field as ever.
    const resolutions = expected.map(({ kind, id, field }) => ({ kind, id, field, take: 'main' }));
    t.is((await s.post(`${API}/drafts/clash/merge`, { resolutions })).status, 200);
    t.is((await s.get(`${API}/components/pay`)).body.name, 'Payment Service');
  }));

/**
 * A changed field's value at `path` in a resource as the API's GET answers it: dotted, items of
 * lists that carry ids named by id (as the diff names them); null where there is none.
 */
function atPath(resource: unknown, path: string): unknown {
  let value = resource;
  for (const step of path.split('.')) {
    if (Array.isArray(value)) value = value.find((item: { id?: unknown }) => item?.id === step);
    else if (typeof value === 'object' && value !== null) value = (value as Record<string, unknown>)[step];
    else value = undefined;
  }
  return value ?? null;
}

test("a draft's changes and diffs name fields and give values as the API's GETs do: typeSlug beside typeId, a diagram's tags as tag objects", (t) =>
  withServer(async (s) => {
    t.is((await s.post(`${API}/tags`, { id: 'pci', name: 'PCI', color: 'red' })).status, 201);
    t.is((await s.post(`${API}/components`, { id: 'pay', name: 'Payments', typeSlug: 'container' })).status, 201);
    t.is((await s.post(`${API}/diagrams`, { id: 'c2', name: 'C2', level: 'C2' })).status, 201);
    const base = await s.head();
    await open(s, 'retype');
    t.is((await s.request('PATCH', `${API}/components/pay?draft=retype`, { body: { typeSlug: 'database' } })).status, 200);
    t.is((await s.request('PATCH', `${API}/diagrams/c2?draft=retype`, { body: { tags: ['pci'] } })).status, 200);
    const head = (await s.get(`${API}/drafts/retype`)).body.head;

    const seed = { component: 'component', diagram: 'diagram' } as Record<string, string>;
    /** Every changed field of a diff against the resource's GET at `from` (old) and at `to` (new). */
    const asAnswered = async (
      what: string,
      diff: { changed: Array<{ kind: string; id: string; fields: Array<{ field: string; old: unknown; new: unknown }> }> },
      from: string,
      to: string,
    ) => {
      t.deepEqual(diff.changed.map((c) => c.id).sort(), ['c2', 'pay'], what);
      for (const { kind, id, fields } of diff.changed) {
        const [before, after] = await Promise.all([from, to].map(async (at) => (await s.get(`${API}/${seed[kind]}/${id}?at=${at}`)).body));
        for (const { field, old, new: now } of fields) {
          t.deepEqual(old, atPath(before, field), `${what}: ${kind} ${id} ${field} old, as GET answers it`);
          t.deepEqual(now, atPath(after, field), `${what}: ${kind} ${id} ${field} new, as GET answers it`);
        }
        const named = fields.map((f) => f.field);
        if (kind === 'component') t.true(named.includes('typeSlug') && named.includes('typeId'), `${what}: ${named.join(', ')}`);
      }
      const typeSlug = diff.changed.find((c) => c.id === 'pay')!.fields.find((f) => f.field === 'typeSlug');
      return typeSlug;
    };

    const details = (await s.get(`${API}/drafts/retype`)).body;
    t.like(await asAnswered("the draft's changes", details.changes, base, head), { old: 'container', new: 'database' });
    const tags = details.changes.changed
      .find((c: { id: string }) => c.id === 'c2')
      .fields.filter((f: { field: string }) => f.field.startsWith('tags'));
    t.deepEqual(tags, [
      { field: 'tags.pci', old: null, new: (await s.get(`${API}/tag`)).body.find((tag: { id: string }) => tag.id === 'pci') },
    ]);
    await asAnswered('/drafts/<name>/diff', (await s.get(`${API}/drafts/retype/diff`)).body, base, head);
    await asAnswered('/diff', (await s.get(`${API}/diff?from=${base}&draft=retype`)).body, base, head);
    // What one commit changed, as /history/<commit> gives it: the diagram's tagging.
    const tagging = (await s.get(`${API}/history/${head}?draft=retype`)).body.diff;
    t.deepEqual(
      tagging.changed[0].fields.find((f: { field: string }) => f.field.startsWith('tags')),
      tags[0],
    );

    // A revert's changes likewise: back to the base, the type and tags as GET gives them.
    const reverted = await s.post(`${API}/revert?draft=retype`, { commit: base });
    t.is(reverted.status, 200, reverted.text);
    t.like(await asAnswered("a revert's changes", reverted.body.changes, head, reverted.body.commit), {
      old: 'database',
      new: 'container',
    });
  }));

test('a merge that would break a rule is refused with the rule; update takes main into the draft', (t) =>
  withServer(async (s) => {
    await s.post(`${API}/components`, { id: 'legacy', name: 'Legacy' });
    await open(s, 'uses-legacy');
    await s.post(`${API}/component?draft=uses-legacy`, [{ ref: 'new', name: 'New', linksTo: ['legacy'] }]);
    t.is((await s.request('DELETE', `${API}/components/legacy`)).status, 200);
    const details = (await s.get(`${API}/drafts/uses-legacy`)).body;
    const newId = (await s.get(`${API}/component?draft=uses-legacy`)).body.find((c: { name: string }) => c.name === 'New').id;
    const rule = `${resourcePath('component', newId)}: Component with id 'legacy' does not exist.`;
    t.is(details.problem, rule);
    const head = await s.head();
    const refused = await s.post(`${API}/drafts/uses-legacy/merge`, {});
    t.is(refused.status, 409);
    t.deepEqual(refused.body, { error: rule });
    t.is(await s.head(), head);
    // Catching up fails alike (the merged model is the same whichever way it goes).
    t.deepEqual((await s.post(`${API}/drafts/uses-legacy/update`, {})).body, { error: rule });

    // One id for two kinds of thing, each side's write valid alone: the API refuses it on one
    // side, and so does the merge of both sides.
    await open(s, 'twin');
    t.is((await s.post(`${API}/tags?draft=twin`, { id: 'twin1', name: 'Twin', color: 'red' })).status, 201);
    t.is((await s.post(`${API}/components`, { id: 'twin1', name: 'Twin' })).status, 201);
    const clash = `${resourcePath('component', 'twin1')}: Id 'twin1' is held by the tag 'twin1' as well: ids are unique across the organization.`;
    const twinHead = await s.head();
    const twin = await s.post(`${API}/drafts/twin/merge`, {});
    t.is(twin.status, 409);
    t.deepEqual(twin.body, { error: clash });
    t.is(await s.head(), twinHead);
    t.is(await s.git('ls-tree', '-r', '--name-only', 'main', 'tags'), '');

    const opened = await open(s, 'catch-up', { title: 'Catch up', desc: 'Queue first' });
    await s.post(`${API}/components?draft=catch-up`, { id: 'queue', name: 'Queue' });
    await s.post(`${API}/components`, { id: 'cache', name: 'Cache' });
    t.is((await s.get(`${API}/drafts/catch-up`)).body.behind, 1);
    const mainTip = await s.head();
    const draftTip = (await s.git('rev-parse', 'drafts/catch-up')).trim();
    // No body at all is a merge without resolutions.
    const updated = await s.request('POST', `${API}/drafts/catch-up/update`);
    t.is(updated.status, 200, updated.text);
    t.like(updated.body, {
      state: 'open',
      committed: true,
      title: 'Catch up',
      desc: 'Queue first',
      created: opened.created,
      author: opened.author,
    });
    const newTip = (await s.git('rev-parse', 'drafts/catch-up')).trim();
    t.is((await s.git('rev-parse', `${newTip}^1`)).trim(), draftTip);
    t.is((await s.git('rev-parse', `${newTip}^2`)).trim(), mainTip);
    t.is(await s.head(), mainTip, 'update never moves main');
    t.is((await s.get(`${API}/drafts/catch-up`)).body.behind, 0);
    t.is((await s.get(`${API}/components/cache?draft=catch-up`)).body.name, 'Cache');
    t.regex(await s.git('log', '-1', '--format=%s', 'drafts/catch-up'), /^Updated draft 'catch-up' with main/);
  }));

test('close keeps the branch as refs/drafts-closed/<name>; reopen brings it back', (t) =>
  withServer(async (s) => {
    await open(s, 'idea');
    await s.post(`${API}/component?draft=idea`, [{ name: 'Maybe' }]);
    const head = (await s.git('rev-parse', 'drafts/idea')).trim();
    const closed = await s.request('DELETE', `${API}/drafts/idea`);
    t.is(closed.status, 200, closed.text);
    t.like(closed.body, { state: 'closed', head });
    t.is(await ref(s, 'refs/heads/drafts/idea'), null);
    t.is(await ref(s, 'refs/drafts-closed/idea'), head);
    t.deepEqual((await s.get(`${API}/drafts`)).body, []);
    t.is((await s.get(`${API}/drafts?state=closed`)).body[0].name, 'idea');
    t.deepEqual((await s.post(`${API}/component?draft=idea`, [{ name: 'X' }])).body, {
      error: "Draft 'idea' is closed; reopen it to change it.",
    });
    t.is((await s.request('DELETE', `${API}/drafts/idea`)).status, 409);
    t.deepEqual((await s.post(`${API}/drafts`, { name: 'idea' })).body, { error: "Draft 'idea' already exists." });

    const reopened = await s.request('POST', `${API}/drafts/idea/reopen`);
    t.is(reopened.status, 200, reopened.text);
    t.like(reopened.body, { state: 'open', head });
    t.is(await ref(s, 'refs/heads/drafts/idea'), head);
    t.is(await ref(s, 'refs/drafts-closed/idea'), null);
    t.is((await s.post(`${API}/component?draft=idea`, [{ name: 'Surely' }])).status, 200);
  }));

test('two merges of one draft at once: one merges, the other is told the draft is merged', (t) =>
  withServer(async (s) => {
    await open(s, 'race');
    await s.post(`${API}/component?draft=race`, [{ name: 'Raced' }]);
    const count = await s.commitCount();
    const replies = await Promise.all([1, 2, 3].map(() => s.request('POST', `${API}/drafts/race/merge`)));
    t.deepEqual(replies.map((r) => r.status).sort(), [200, 409, 409], replies.map((r) => r.text).join('\n'));
    // Each loser in the drafts' words ("Branch 'drafts/race' no longer exists." before).
    for (const lost of replies.filter((r) => r.status === 409)) {
      t.deepEqual(lost.body, { error: "Draft 'race' is merged; only an open draft can be merged or updated." });
    }
    t.is(await s.commitCount(), count + 2, "one merge commit (main also gains the draft's commit)");
  }));

test('the events seam is told when a draft opens, catches up, merges, closes and reopens', (t) =>
  withServer(async (s) => {
    const events: DraftEvent[] = [];
    const stop = onDraftEvent((event) => {
      // Other tests of this file run beside it, on organizations of the same slug: its own drafts only.
      if (event.draft === 'told' || event.draft === 'shelved') events.push(event);
    });
    try {
      await open(s, 'told');
      await s.post(`${API}/components?draft=told`, { id: 'queue', name: 'Queue' });
      await s.post(`${API}/components`, { id: 'cache', name: 'Cache' });
      await s.request('POST', `${API}/drafts/told/update`);
      const updated = (await s.git('rev-parse', 'drafts/told')).trim();
      await s.request('POST', `${API}/drafts/told/merge`);
      await open(s, 'shelved');
      await s.request('DELETE', `${API}/drafts/shelved`);
      await s.request('POST', `${API}/drafts/shelved/reopen`);
      t.deepEqual(
        events.map((e) => `${e.type} ${e.draft}`),
        ['opened told', 'updated told', 'merged told', 'opened shelved', 'closed shelved', 'reopened shelved'],
      );
      t.is(events[1]!.commit, updated);
      t.is(events[2]!.commit, await s.head());
    } finally {
      stop();
    }
  }));

/** A diff's resources and fields, without `apiContext` (when each was last written). */
function shape(diff: {
  added: Array<{ id: string }>;
  removed: Array<{ id: string }>;
  changed: Array<{ id: string; fields: Array<{ field: string; old: unknown; new: unknown }> }>;
}) {
  return {
    added: diff.added.map((r) => r.id),
    removed: diff.removed.map((r) => r.id),
    changed: diff.changed.map((r) => [r.id, r.fields.filter((f) => f.field !== 'apiContext').map((f) => [f.field, f.old, f.new])]),
  };
}

test('a merged draft answers what its merge brought into main, as it was merged, however far main moves on', (t) =>
  withServer(async (s) => {
    await s.post(`${API}/components`, { id: 'pay', name: 'Payments' });
    await s.post(`${API}/components`, { id: 'db', name: 'DB' });
    const opened = await s.head();
    await open(s, 'payments-v2');
    await s.post(`${API}/components?draft=payments-v2`, { id: 'fraud', name: 'Fraud Check' });
    // main moves, and the draft catches up: its base is no longer where it was opened.
    await s.post(`${API}/components`, { id: 'cache', name: 'Cache' });
    const caughtUp = await s.head();
    t.is((await s.request('POST', `${API}/drafts/payments-v2/update`)).status, 200);
    await s.request('PATCH', `${API}/components/pay?draft=payments-v2`, { body: { name: 'Payments Hub', desc: 'All money' } });
    // main moves again: the same field differently (settled for main), and another component.
    await s.request('PATCH', `${API}/components/pay`, { body: { name: 'Payment Service' } });
    await s.request('PATCH', `${API}/components/db`, { body: { desc: 'Postgres' } });
    const mainBefore = await s.head();
    const draftHead = (await s.git('rev-parse', 'drafts/payments-v2')).trim();

    const before = (await s.get(`${API}/drafts/payments-v2`)).body;
    t.like(before, { state: 'open', base: caughtUp, head: draftHead, behind: 2 });
    t.like(before.changes, { from: caughtUp, to: draftHead });
    t.deepEqual(shape(before.changes), {
      added: ['fraud'],
      removed: [],
      changed: [
        [
          'pay',
          [
            ['name', 'Payments', 'Payments Hub'],
            ['desc', null, 'All money'],
          ],
        ],
      ],
    });

    const both = await s.post(`${API}/drafts/payments-v2/merge`, {
      resolutions: [{ kind: 'component', id: 'pay', field: 'name', take: 'both' }],
    });
    t.deepEqual(both.body, { error: "Invalid JSON: resolutions.0.take: Invalid enum value. Expected 'main' | 'draft', received 'both'" });
    const merged = await s.post(`${API}/drafts/payments-v2/merge`, {
      resolutions: [{ kind: 'component', id: 'pay', field: 'name', take: 'main' }],
    });
    t.is(merged.status, 200, merged.text);
    const mergeCommit = await s.head();
    t.like(merged.body, { state: 'merged', base: caughtUp, head: draftHead, mergeCommit });
    // main moves on after the merge: the draft's answer stays what the merge brought.
    await s.post(`${API}/components`, { id: 'late', name: 'Late' });
    await s.request('PATCH', `${API}/components/fraud`, { body: { desc: 'Scores payments' } });

    const details = (await s.get(`${API}/drafts/payments-v2`)).body;
    t.like(details, { state: 'merged', base: caughtUp, head: draftHead, mergeCommit, behind: 2, conflicts: [] });
    t.like(details.changes, { from: mainBefore, to: mergeCommit });
    // What main got: the new component and the draft's desc; not the name main kept, not main's own
    // work before the merge (cache, db) nor after it (late, fraud's desc).
    const brought = {
      added: ['fraud'],
      removed: [],
      changed: [['pay', [['desc', null, 'All money']]]],
    };
    t.deepEqual(shape(details.changes), brought);
    // The same files git itself says the merge commit changed against its first parent.
    t.deepEqual(
      (await s.git('diff', '--name-only', mainBefore, mergeCommit)).trim().split('\n').sort(),
      ['fraud', 'pay'].map((id) => resourcePath('component', id)).sort(),
    );
    const diff = (await s.get(`${API}/drafts/payments-v2/diff`)).body;
    t.like(diff, { from: mainBefore, to: mergeCommit });
    t.deepEqual(shape(diff), brought);
    t.like((await s.get(`${API}/drafts?state=merged`)).body[0], { name: 'payments-v2', base: caughtUp, head: draftHead });
    t.not(caughtUp, opened);

    // A draft main already holds (no commits of its own) is marked merged without a commit: it brought nothing.
    await open(s, 'empty');
    await s.post(`${API}/components`, { id: 'queue', name: 'Queue' });
    const tip = await s.head();
    const emptyHead = (await s.git('rev-parse', 'drafts/empty')).trim();
    const marked = await s.post(`${API}/drafts/empty/merge`, {});
    t.like(marked.body, { state: 'merged', committed: false, mergeCommit: tip, base: emptyHead });
    t.is(await s.head(), tip);
    const empty = (await s.get(`${API}/drafts/empty`)).body;
    t.like(empty, { state: 'merged', base: emptyHead, head: emptyHead, behind: 1 });
    t.deepEqual(empty.changes, { from: emptyHead, to: emptyHead, added: [], removed: [], changed: [] });
    t.deepEqual((await s.get(`${API}/drafts/empty/diff`)).body, empty.changes);

    // Without the drafts' records (c4store-drafts.json lost), the merge commit is found on main's history.
    await rm(join(s.gitdir, 'c4store-drafts.json'));
    const unrecorded = (await s.get(`${API}/drafts/payments-v2`)).body;
    t.like(unrecorded, { state: 'merged', base: caughtUp, behind: 2 });
    t.like(unrecorded.changes, { from: mainBefore, to: mergeCommit });
    t.deepEqual(shape(unrecorded.changes), brought);
    t.deepEqual((await s.get(`${API}/drafts/empty`)).body.changes, empty.changes);
  }));

test("with ?draft=, /diff compares to the draft by default; versions and share links, which are main's, refuse it", (t) =>
  withServer(async (s) => {
    await s.post(`${API}/components`, { id: 'ledger', name: 'Ledger' });
    await s.post(`${API}/diagrams`, { id: 'ctx', name: 'Context', level: 'C1' });
    const base = await s.head();
    await open(s, 'fraud');
    await s.post(`${API}/components?draft=fraud`, { id: 'fraud', name: 'Fraud Check' });
    const draftHead = (await s.git('rev-parse', 'drafts/fraud')).trim();
    const diff = await s.get(`${API}/diff?from=${base}&draft=fraud`);
    t.is(diff.status, 200, diff.text);
    t.is(diff.body.to, draftHead);
    t.is(diff.headers.get('etag'), `"${draftHead}"`);
    t.deepEqual(
      diff.body.added.map((r: { id: string }) => r.id),
      ['fraud'],
    );
    t.is((await s.get(`${API}/diff?from=${base}`)).body.to, base, 'without ?draft=, main');

    const head = await s.head();
    const refusals: Array<[string, string, string, unknown?]> = [
      ['POST', `${API}/version?draft=fraud`, 'Versions', { name: 'v1' }],
      ['GET', `${API}/versions?draft=fraud`, 'Versions'],
      ['POST', `${API}/diagrams/ctx/share-links?draft=fraud`, 'Share links', {}],
      ['GET', `${API}/share-links?draft=fraud`, 'Share links'],
      ['GET', `${API}/diagram/ctx/share-links?draft=nope`, 'Share links'],
    ];
    for (const [method, path, what, body] of refusals) {
      const reply = await s.request(method, path, body === undefined ? {} : { body });
      t.is(reply.status, 400, path);
      t.deepEqual(reply.body, { error: `${what} belong to main: ?draft= does not apply to them.` });
    }
    t.is(await s.head(), head);
    t.is(await s.git('tag', '--list'), '');
    t.deepEqual((await s.get(`${API}/share-links`)).body, []);
  }));

test('damaged draft records refuse a merge before main moves, with a text naming the file; repaired, it merges', (t) =>
  withServer(async (s) => {
    await open(s, 'y1');
    t.is((await s.post(`${API}/tags?draft=y1`, { id: 'y1tag', name: 'Y1', color: 'red' })).status, 201);
    const file = join(s.gitdir, 'c4store-drafts.json');
    const whole = await readFile(file, 'utf8');
    await writeFile(file, whole.slice(0, Math.floor(whole.length / 2)));
    const head = await s.head();
    const refused = await s.post(`${API}/drafts/y1/merge`, {});
    t.is(refused.status, 503, refused.text);
    t.regex(
      refused.body.error,
      /^The drafts' records \(c4store-drafts\.json in the organization's repository\) cannot be read: .+\. Repair the file, or remove it/,
    );
    t.is(await s.head(), head, 'main did not move');
    t.is((await s.git('rev-parse', '--verify', '-q', 'refs/heads/drafts/y1')).trim().length, 40, 'the draft is still open');
    t.is(await readFile(file, 'utf8'), whole.slice(0, Math.floor(whole.length / 2)), 'the damaged file is left as it was');
    // Valid JSON of another shape is damage too, never "no records".
    for (const damaged of ['null', '{}', '[]', '5']) {
      await writeFile(file, damaged);
      t.is((await s.post(`${API}/drafts/y1/merge`, {})).status, 503, damaged);
    }
    t.is(await s.head(), head, 'main did not move');
    await writeFile(file, whole);
    const merged = await s.post(`${API}/drafts/y1/merge`, {});
    t.is(merged.status, 200, merged.text);
    t.is(merged.body.state, 'merged');
  }));

test('resolutions that settle one field both ways are refused, naming both, and nothing merges; the same twice is taken', (t) =>
  withServer(async (s) => {
    await s.post(`${API}/components`, { id: 'pay', name: 'Payments' });
    await open(s, 'both-ways');
    await s.request('PATCH', `${API}/components/pay?draft=both-ways`, { body: { name: 'Payments Hub' } });
    await s.request('PATCH', `${API}/components/pay`, { body: { name: 'Payment Service' } });
    const mainBefore = await s.head();
    const settle = (take: string) => ({ kind: 'component', id: 'pay', field: 'name', take });

    for (const update of [false, true]) {
      const action = update ? 'update' : 'merge';
      const draftBefore = await ref(s, 'refs/heads/drafts/both-ways');
      const refused = await s.post(`${API}/drafts/both-ways/${action}`, { resolutions: [settle('draft'), settle('main')] });
      t.is(refused.status, 400, action);
      t.deepEqual(refused.body, {
        error:
          "Resolutions 0 and 1 both settle field 'name' of component 'pay', one with take 'draft' and the other with 'main': give one.",
      });
      t.is(await s.head(), mainBefore, `${action}: main is as it was`);
      t.is(await ref(s, 'refs/heads/drafts/both-ways'), draftBefore, `${action}: the draft is as it was`);
    }
    t.is((await s.get(`${API}/drafts/both-ways`)).body.state, 'open');

    const merged = await s.post(`${API}/drafts/both-ways/merge`, { resolutions: [settle('main'), settle('main')] });
    t.is(merged.status, 200, merged.text);
    t.is((await s.get(`${API}/components/pay`)).body.name, 'Payment Service');
  }));

test('writes to a draft while it is merged or closed: each lands in the draft or is told in the drafts’ words, never that its branch is gone', (t) =>
  withServer(async (s) => {
    for (const [round, ending] of ['merge', 'close', 'merge', 'close', 'merge', 'close'].entries()) {
      const name = `ends-${round}`;
      await open(s, name);
      await s.post(`${API}/component?draft=${name}`, [{ name: 'First' }]);
      const end = ending === 'merge' ? s.request('POST', `${API}/drafts/${name}/merge`) : s.request('DELETE', `${API}/drafts/${name}`);
      const writes = [1, 2, 3].map((i) => s.post(`${API}/component?draft=${name}`, [{ name: `Write ${i}` }]));
      const [ended, ...replies] = await Promise.all([end, ...writes]);
      t.is(ended.status, 200, ended.text);
      const told =
        ending === 'merge'
          ? `Draft '${name}' is merged; open a new draft for further changes.`
          : `Draft '${name}' is closed; reopen it to change it.`;
      for (const reply of replies) {
        if (reply.status === 200) continue;
        t.is(reply.status, 409, reply.text);
        t.deepEqual(reply.body, { error: told }, `${name}: a write ${ending}d away under it`);
      }
    }
  }));

test('reads of a draft while it is merged or closed are served, from wherever its branch went', (t) =>
  withServer(async (s) => {
    for (const [round, ending] of ['merge', 'close', 'merge', 'close'].entries()) {
      const name = `read-${round}`;
      await open(s, name);
      await s.post(`${API}/component?draft=${name}`, [{ name: 'Drafted' }]);
      const end = ending === 'merge' ? s.request('POST', `${API}/drafts/${name}/merge`) : s.request('DELETE', `${API}/drafts/${name}`);
      const reads = Array.from({ length: 30 }, () => s.get(`${API}/components?draft=${name}`));
      const [ended, ...replies] = await Promise.all([end, ...reads]);
      t.is(ended.status, 200, ended.text);
      for (const reply of replies) {
        t.is(reply.status, 200, `${name}: ${reply.text}`);
        t.true(
          (reply.body as { name: string }[]).some((c) => c.name === 'Drafted'),
          name,
        );
      }
    }
  }));
