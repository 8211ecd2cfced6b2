/**
 * Crash loop: a server process, 50 clients writing components and diagrams, SIGKILL at a
 * random moment, restart; after every cycle the repository and the API are checked against
 * everything the clients were told.
 *
 * Every request carries a unique marker (`k3-c17-s42`: cycle 3, client 17, its 42nd
 * request) as the `apiContext` of each element and in its names, so each commit names the
 * request it belongs to in its `Api-Context:` trailer and each file names it in its text.
 * Each client owns the resources it created and is the only one to update them, so the
 * expected state of every resource is known exactly, except for the one request per client
 * that was in flight when the server died, which may or may not have been committed.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { resourcePath } from '../src/model/paths.js';
import {
  LOCK_STALE_MS,
  Problems,
  call,
  commitsOf,
  createOrg,
  difference,
  fsck,
  git,
  gitRaw,
  gitdirOf,
  leftLocks,
  pick,
  randomInt,
  readBlobs,
  round,
  sameResource,
  sample,
  scratchDir,
  sleep,
  startServerProcess,
  type Answer,
  type Kind,
  type ServerProcess,
  type ServerProcessOptions,
} from './shared.js';

export interface CrashLoopOptions {
  /** Kill-and-restart cycles (default 20). */
  cycles?: number;
  /** Concurrent clients (default 50). */
  clients?: number;
  /** Run the servers with `--durable` (odd cycles) and `C4STORE_DURABLE=1` (even cycles). */
  durable?: boolean;
  /** The kill comes this many ms after the clients start, uniformly at random (default 500–4000). */
  killAfterMs?: [number, number];
  /** Acknowledged writes per cycle re-read with `?at=<their commit>` (default: all). */
  atChecksPerCycle?: number;
  /** Keep the data directory (default: removed when no problem was found). */
  keepData?: boolean;
  log?: (line: string) => void;
}

export interface CrashLoopResult {
  figures: {
    cyclesRun: number;
    cyclesSurvived: number;
    writesSent: number;
    acknowledged: number;
    acknowledgedFound: number;
    refusedOnPurpose: number;
    refusedAndAbsent: number;
    unanswered: number;
    committedButUnanswered: number;
    halfPresent: number;
    lostAcknowledged: number;
    unexpectedAnswers: number;
    fsckRuns: number;
    fsckClean: number;
    commits: number;
    resourcesCompared: number;
    atChecks: number;
    killsHoldingWriteLock: number;
    killsHoldingRefLock: number;
    maxFirstWriteMs: number;
    meanFirstWriteMs: number;
    maxKillToFirstWriteMs: number;
    /** How long the first write had to wait for the dead process's lock to turn stale. */
    maxDeadLockWaitMs: number;
    /** How long the first write took beyond that: from max(its request, the lock turning stale) to its answer. */
    maxAnsweredAfterStaleMs: number;
    /** The first request after a restart, which loads the model from git. */
    maxModelLoadMs: number;
    writesPerSecond: number;
  };
  problems: string[];
  problemCount: number;
  dataDir: string;
}

type Op = 'probe' | 'component' | 'diagram' | 'model' | 'bad-component' | 'bad-diagram' | 'bad-model';

interface WriteRecord {
  marker: string;
  cycle: number;
  /** -1: the probe write right after a restart. */
  client: number;
  op: Op;
  path: string;
  /** false: made to be refused with 400. */
  valid: boolean;
  /** Existing resources the request overwrites. */
  updates: Array<{ kind: Kind; id: string }>;
  /** Kinds of the resources it creates. */
  creates: Kind[];
  answer?: Answer;
  outcome?: 'acked' | 'refused' | 'unanswered' | 'unexpected';
  /** The commit found carrying the marker. */
  committed?: string;
}

interface Expected {
  kind: Kind;
  content: any;
}

const SLUG = 'acme';
const STATES = ['DRAFT', 'ACTIVE', 'ARCHIVED'];
const TYPES = ['software-system', 'container', 'component', 'database'];

export async function crashLoop(options: CrashLoopOptions = {}): Promise<CrashLoopResult> {
  const cycles = options.cycles ?? 20;
  const clients = options.clients ?? 50;
  const [killMin, killMax] = options.killAfterMs ?? [500, 4000];
  const atChecksPerCycle = options.atChecksPerCycle ?? Infinity;
  const log = options.log ?? (() => {});
  const prefix = options.durable ? 'd' : 'k';

  const dataDir = await scratchDir(options.durable ? 'crash-durable' : 'crash');
  const key = await createOrg(dataDir, SLUG);
  const gitdir = gitdirOf(dataDir, SLUG);
  const problems = new Problems();

  const records = new Map<string, WriteRecord>();
  let batch: WriteRecord[] = [];
  const expected = new Map<string, Expected>();
  /** Resources whose last request went unanswered: id -> that request's marker. */
  const pending = new Map<string, string>();
  const committedMarkers = new Set<string>();
  let verifiedHead = (await git(gitdir, 'rev-parse', 'main')).trim();
  const baseCommits = Number((await git(gitdir, 'rev-list', '--count', 'main')).trim());

  const f: CrashLoopResult['figures'] = {
    cyclesRun: 0,
    cyclesSurvived: 0,
    writesSent: 0,
    acknowledged: 0,
    acknowledgedFound: 0,
    refusedOnPurpose: 0,
    refusedAndAbsent: 0,
    unanswered: 0,
    committedButUnanswered: 0,
    halfPresent: 0,
    lostAcknowledged: 0,
    unexpectedAnswers: 0,
    fsckRuns: 0,
    fsckClean: 0,
    commits: 0,
    resourcesCompared: 0,
    atChecks: 0,
    killsHoldingWriteLock: 0,
    killsHoldingRefLock: 0,
    maxFirstWriteMs: 0,
    meanFirstWriteMs: 0,
    maxKillToFirstWriteMs: 0,
    maxDeadLockWaitMs: 0,
    maxAnsweredAfterStaleMs: 0,
    maxModelLoadMs: 0,
    writesPerSecond: 0,
  };
  /** What each client created and was told about; a client carries on with it after a restart. */
  const owned = Array.from({ length: clients }, () => ({ components: [] as string[], diagrams: [] as string[] }));
  const firstWriteDelays: number[] = [];
  let writingMs = 0;

  const serverOptions = (cycle: number): ServerProcessOptions => {
    if (!options.durable) return { env: { C4STORE_DURABLE: '' } };
    return cycle % 2 === 1 ? { args: ['--durable'], env: { C4STORE_DURABLE: '' } } : { env: { C4STORE_DURABLE: '1' } };
  };

  const record = (r: WriteRecord) => {
    records.set(r.marker, r);
    batch.push(r);
    f.writesSent++;
  };

  /** Files the commit of a valid request must change: one per element. */
  const expectedFiles = (r: WriteRecord) => r.updates.length + r.creates.length;

  /** Takes a write's answer into the expected state. */
  const settle = (r: WriteRecord, answer: Answer, killedAt: number | null): any[] => {
    r.answer = answer;
    if (answer.status === 0) {
      r.outcome = 'unanswered';
      f.unanswered++;
      if (killedAt === null || answer.answeredAt < killedAt) {
        problems.add(`${r.marker}: ${r.op} got no answer while the server was up (${answer.error}, ${Math.round(answer.ms)} ms)`);
      }
      for (const u of r.updates) pending.set(u.id, r.marker);
      return [];
    }
    if (!r.valid) {
      if (answer.status === 400) {
        r.outcome = 'refused';
        f.refusedOnPurpose++;
      } else {
        r.outcome = 'unexpected';
        f.unexpectedAnswers++;
        problems.add(`${r.marker}: ${r.op} made to be refused got ${answer.status}: ${answer.text.slice(0, 200)}`);
      }
      return [];
    }
    if (answer.status !== 200) {
      r.outcome = 'unexpected';
      f.unexpectedAnswers++;
      problems.add(`${r.marker}: ${r.op} got ${answer.status}: ${answer.text.slice(0, 300)}`);
      return [];
    }
    r.outcome = 'acked';
    f.acknowledged++;
    const elements = ackedElements(r, answer.body);
    if (elements.length !== expectedFiles(r)) {
      problems.add(`${r.marker}: answer holds ${elements.length} resources, the request ${expectedFiles(r)}`);
    }
    for (const { kind, content } of elements) {
      expected.set(content.id, { kind, content });
      pending.delete(content.id);
    }
    return elements;
  };

  // -------------------------------------------------------------------------
  // Checks after each restart: git first (the truth), then the API.

  const verify = async (url: string, label: string) => {
    const before = problems.count;
    const fail = (text: string) => problems.add(`${label}: ${text}`);

    const merges = (await git(gitdir, 'rev-list', '--merges', 'main')).trim();
    if (merges !== '') fail(`history has merge commits: ${merges.split('\n').length}`);
    const ancestor = await gitRaw(gitdir, ['merge-base', '--is-ancestor', verifiedHead, 'main']);
    if (ancestor.code !== 0) fail(`main no longer contains the verified commit ${verifiedHead}: history was rewritten`);
    const head = (await git(gitdir, 'rev-parse', 'main')).trim();
    const commits = await commitsOf(gitdir, `${verifiedHead}..${head}`);
    const blobSpecs: Array<{ spec: string; marker: string }> = [];
    const halfPresent = new Set<string>();
    for (const commit of commits) {
      if (commit.parents.length !== 1) fail(`commit ${commit.oid} has ${commit.parents.length} parents`);
      if (commit.contexts.length !== 1) {
        fail(
          `commit ${commit.oid} carries ${commit.contexts.length} request markers (${commit.contexts.join(', ')}): ${commit.message.split('\n')[0]}`,
        );
        continue;
      }
      const marker = commit.contexts[0]!;
      const r = records.get(marker);
      if (!r) {
        fail(`commit ${commit.oid} belongs to no request that was sent (${marker})`);
        continue;
      }
      if (committedMarkers.has(marker)) fail(`request ${marker} was committed twice (again in ${commit.oid})`);
      committedMarkers.add(marker);
      r.committed = commit.oid;
      if (!r.valid) {
        fail(`request ${marker} (${r.op}), made to be refused and answered ${r.answer?.status}, was committed in ${commit.oid}`);
        halfPresent.add(marker);
        continue;
      }
      // All or nothing: the commit changes exactly the request's files, each naming the request.
      const problemsOfFiles = checkFiles(r, commit.files);
      if (problemsOfFiles) {
        fail(`commit ${commit.oid} of ${marker} (${r.op}, ${r.outcome}): ${problemsOfFiles}`);
        halfPresent.add(marker);
      }
      for (const file of commit.files) if (file.status !== 'D') blobSpecs.push({ spec: `${commit.oid}:${file.path}`, marker });
    }
    const blobs = await readBlobs(
      gitdir,
      blobSpecs.map((b) => b.spec),
    );
    blobs.forEach((text, i) => {
      const { spec, marker } = blobSpecs[i]!;
      if (text === null) fail(`${spec} cannot be read`);
      else if (!text.includes(marker)) {
        fail(`${spec} does not name its request ${marker}`);
        halfPresent.add(marker);
      }
    });
    const count = Number((await git(gitdir, 'rev-list', '--count', head)).trim());
    if (count !== baseCommits + committedMarkers.size) {
      fail(`main has ${count} commits, expected ${baseCommits} + ${committedMarkers.size} committed requests`);
    }
    f.commits = count;

    for (const r of batch) {
      if (r.outcome === 'acked') {
        if (!r.committed) {
          f.lostAcknowledged++;
          fail(`acknowledged write ${r.marker} (${r.op}, commit ${r.answer?.etag}) is not in the history of main`);
        } else if (r.committed !== r.answer?.etag) {
          fail(`acknowledged write ${r.marker} answered commit ${r.answer?.etag} but is in ${r.committed}`);
        } else if (!halfPresent.has(r.marker)) f.acknowledgedFound++;
      } else if (r.outcome === 'refused') {
        if (!r.committed) f.refusedAndAbsent++;
      } else if (r.outcome === 'unanswered' && r.committed) f.committedButUnanswered++;
    }
    verifiedHead = head;

    // The model at the tip, through the API.
    const lists = await Promise.all((['component', 'diagram'] as const).map((kind) => call(url, key, 'GET', `/api/external/${kind}`)));
    const current = new Map<string, Expected>();
    const census = new Map<string, number>();
    lists.forEach((list, i) => {
      const kind = (['component', 'diagram'] as const)[i]!;
      if (list.status !== 200 || !Array.isArray(list.body)) {
        fail(`GET /api/external/${kind} answered ${list.status}: ${list.text.slice(0, 200)}`);
        return;
      }
      for (const resource of list.body) {
        current.set(resource.id, { kind, content: resource });
        if (typeof resource.apiContext === 'string') census.set(resource.apiContext, (census.get(resource.apiContext) ?? 0) + 1);
      }
    });
    if (current.size === 0) return problems.count === before;

    // A request that was not committed is nowhere; one committed unanswered is there whole.
    for (const r of batch) {
      const present = census.get(r.marker) ?? 0;
      if (!r.committed && present !== 0) {
        fail(`request ${r.marker} (${r.op}, ${r.outcome}) was not committed, yet ${present} resources carry it`);
        halfPresent.add(r.marker);
      }
      if (r.committed && r.outcome === 'unanswered' && present !== expectedFiles(r)) {
        fail(`unanswered request ${r.marker} (${r.op}) was committed, but ${present} of its ${expectedFiles(r)} resources carry it`);
        halfPresent.add(r.marker);
      }
    }
    // The in-flight updates: committed, or the resource is as last acknowledged.
    for (const [id, marker] of pending) {
      const r = records.get(marker)!;
      const now = current.get(id);
      if (r.committed) {
        if (now?.content.apiContext !== marker)
          fail(`${id} should carry the committed unanswered request ${marker}, carries ${now?.content.apiContext}`);
        else expected.set(id, now);
      }
    }
    pending.clear();
    for (const r of batch) {
      if (r.outcome !== 'unanswered' || !r.committed) continue;
      for (const [id, resource] of current) {
        if (resource.content.apiContext === r.marker && !expected.has(id)) expected.set(id, resource);
      }
    }
    // Every acknowledged write not overwritten since is at the tip exactly as it was answered.
    for (const [id, want] of expected) {
      const now = current.get(id);
      f.resourcesCompared++;
      if (!now || !sameResource(want.kind, want.content, now.content)) {
        f.lostAcknowledged++;
        fail(
          `${want.kind} ${id} (${want.content.apiContext}) differs from what was acknowledged: ${difference(want.kind, want.content, now?.content)}`,
        );
      }
    }
    // Every acknowledged write, also the overwritten ones, as of its own commit.
    const acked = batch.filter((r) => r.outcome === 'acked' && r.committed);
    const checked = atChecksPerCycle >= acked.length ? acked : sample(acked, atChecksPerCycle);
    await inParallel(checked, 8, async (r) => {
      for (const { kind, content } of ackedElements(r, r.answer!.body)) {
        const at = await call(url, key, 'GET', `/api/external/${kind}/${content.id}?at=${r.answer!.etag}`);
        f.atChecks++;
        if (at.status !== 200 || at.etag !== r.answer!.etag || !sameResource(kind, content, at.body)) {
          f.lostAcknowledged++;
          fail(`${kind} ${content.id} as of ${r.answer!.etag} (${r.marker}): ${at.status} ${difference(kind, content, at.body)}`);
        }
      }
    });
    f.halfPresent += halfPresent.size;
    return problems.count === before;
  };

  // -------------------------------------------------------------------------
  // The cycles

  let killedAt: number | null = null;
  /** When the dead process last touched the write lock it left (null: it left none). */
  let deadLockMtime: number | null = null;
  const fsckAfterKill = async (cycle: number) => {
    const check = await fsck(gitdir, { serversRunning: false });
    f.fsckRuns++;
    if (check.clean) f.fsckClean++;
    else problems.add(`cycle ${cycle}: git fsck after the kill: ${check.report.slice(0, 500)}`);
  };
  for (let cycle = 1; cycle <= cycles + 1; cycle++) {
    let server: ServerProcess;
    try {
      server = await startServerProcess(dataDir, serverOptions(cycle));
    } catch (error) {
      problems.add(`cycle ${cycle}: the server did not start: ${(error as Error).message}`);
      break;
    }
    try {
      // The first request after a restart loads the model; then the first write, which the
      // dead process's lock may hold up until it is stale (its mtime + LOCK_STALE_MS).
      const warmUp = await call(server.url, key, 'GET', '/api/external/component');
      if (warmUp.status !== 200) problems.add(`cycle ${cycle}: first GET after the restart answered ${warmUp.status}`);
      f.maxModelLoadMs = Math.max(f.maxModelLoadMs, round(warmUp.ms));
      const probe = newProbe(prefix, cycle);
      record(probe.record);
      const answer = await call(server.url, key, 'POST', probe.record.path, probe.body);
      settle(probe.record, answer, null);
      if (cycle > 1) {
        firstWriteDelays.push(answer.ms);
        f.maxFirstWriteMs = Math.max(f.maxFirstWriteMs, answer.ms);
        if (killedAt !== null) f.maxKillToFirstWriteMs = Math.max(f.maxKillToFirstWriteMs, answer.answeredAt - killedAt);
        if (deadLockMtime !== null) {
          // The dead lock may hold the write up until it is stale, not a moment longer.
          const staleAt = deadLockMtime + LOCK_STALE_MS;
          f.maxDeadLockWaitMs = Math.max(f.maxDeadLockWaitMs, staleAt - answer.sentAt);
          f.maxAnsweredAfterStaleMs = Math.max(f.maxAnsweredAfterStaleMs, answer.answeredAt - Math.max(answer.sentAt, staleAt));
          if (answer.answeredAt < staleAt - 100) {
            problems.add(
              `cycle ${cycle}: the first write was answered ${Math.round(staleAt - answer.answeredAt)} ms before the dead process's lock was stale`,
            );
          }
        }
        if (answer.ms > LOCK_STALE_MS + 1000) {
          problems.add(
            `cycle ${cycle}: the first write after the restart took ${Math.round(answer.ms)} ms, more than the lock's stale time (${LOCK_STALE_MS} ms) + 1 s`,
          );
        }
      }
      if (cycle > 1) {
        const survived = await verify(server.url, `after kill ${cycle - 1}`);
        if (survived) f.cyclesSurvived++;
        log(
          `  cycle ${cycle - 1}/${cycles}: ${survived ? 'ok' : 'PROBLEMS'} — ${batch.filter((r) => r.outcome === 'acked').length} acknowledged, ` +
            `${batch.filter((r) => r.outcome === 'unanswered').length} unanswered (${batch.filter((r) => r.outcome === 'unanswered' && r.committed).length} committed), ` +
            `first write after restart ${Math.round(answer.ms)} ms`,
        );
      } else {
        await verify(server.url, 'before the first kill');
      }
      batch = [];
      if (cycle === cycles + 1) break;

      // 50 clients until the kill.
      f.cyclesRun++;
      const stop = { killedAt: null as number | null };
      const started = Date.now();
      const running = Array.from({ length: clients }, (_, client) =>
        runClient({ url: server.url, key, prefix, cycle, client, stop, record, settle, expected, problems, owned: owned[client]! }),
      );
      await sleep(randomInt(killMin, killMax));
      stop.killedAt = Date.now();
      killedAt = stop.killedAt;
      server.child.kill('SIGKILL');
      await server.exited;
      writingMs += stop.killedAt - started;
      await Promise.all(running);
      const locks = leftLocks(gitdir);
      deadLockMtime = locks.writeLockMtime;
      if (locks.writeLock) f.killsHoldingWriteLock++;
      if (locks.refLock) f.killsHoldingRefLock++;
      // The repository as the kill left it, checked before the next server starts: git fsck
      // lists the objects before it reads the refs, so a commit the next server made in
      // between would read as "missing commit".
      await fsckAfterKill(cycle);
    } finally {
      for (const line of server.troubles) problems.add(`cycle ${cycle}: server said: ${line}`);
      server.troubles.length = 0;
      await server.stop('SIGKILL');
    }
  }

  const final = await fsck(gitdir, { serversRunning: false });
  f.fsckRuns++;
  if (final.clean) f.fsckClean++;
  else problems.add(`final git fsck: ${final.report.slice(0, 500)}`);
  f.meanFirstWriteMs = firstWriteDelays.length ? round(firstWriteDelays.reduce((a, b) => a + b, 0) / firstWriteDelays.length) : 0;
  f.maxFirstWriteMs = round(f.maxFirstWriteMs);
  f.maxKillToFirstWriteMs = round(f.maxKillToFirstWriteMs);
  f.maxAnsweredAfterStaleMs = round(f.maxAnsweredAfterStaleMs);
  f.maxDeadLockWaitMs = round(f.maxDeadLockWaitMs);
  f.writesPerSecond = writingMs ? round((f.acknowledged / writingMs) * 1000, 1) : 0;
  if (problems.count === 0 && !options.keepData) await rm(dataDir, { recursive: true, force: true });
  return { figures: f, problems: problems.list, problemCount: problems.count, dataDir };
}

/** The changed files of a valid request's commit, or what is wrong with them. */
function checkFiles(r: WriteRecord, files: Array<{ status: string; path: string }>): string | null {
  const wrong: string[] = [];
  const dirOf: Record<Kind, string> = { tag: 'tags', attribute: 'attributes', component: 'components', diagram: 'diagrams' };
  const pathOf = (kind: Kind, id: string) => resourcePath(kind, id);
  if (files.length !== r.updates.length + r.creates.length) {
    wrong.push(`changes ${files.length} files, the request has ${r.updates.length + r.creates.length} elements`);
  }
  for (const kind of ['component', 'diagram'] as Kind[]) {
    const creates = r.creates.filter((k) => k === kind).length;
    const added = files.filter((file) => file.status === 'A' && file.path.startsWith(`${dirOf[kind]}/`)).length;
    if (added !== creates) wrong.push(`adds ${added} ${kind} files, the request creates ${creates}`);
  }
  for (const u of r.updates) {
    const path = pathOf(u.kind, u.id);
    if (!files.some((file) => file.status === 'M' && file.path === path)) wrong.push(`does not modify ${path}`);
  }
  if (r.outcome === 'acked') {
    const answered = new Set(ackedElements(r, r.answer!.body).map(({ kind, content }) => pathOf(kind, content.id)));
    for (const file of files) if (!answered.has(file.path)) wrong.push(`changes ${file.path}, which the answer does not name`);
  }
  return wrong.length ? wrong.join('; ') : null;
}

/** The resources a 200 answer returned, with their kinds. */
function ackedElements(r: WriteRecord, body: any): Array<{ kind: Kind; content: any }> {
  if (r.op === 'model') {
    return [
      ...((body?.components ?? []) as any[]).map((content) => ({ kind: 'component' as Kind, content })),
      ...((body?.diagrams ?? []) as any[]).map((content) => ({ kind: 'diagram' as Kind, content })),
    ];
  }
  const kind: Kind = r.op === 'diagram' ? 'diagram' : 'component';
  return Array.isArray(body) ? body.map((content) => ({ kind, content })) : [];
}

function newProbe(prefix: string, cycle: number): { record: WriteRecord; body: unknown } {
  const marker = `${prefix}${cycle}-probe`;
  return {
    record: { marker, cycle, client: -1, op: 'probe', path: '/api/external/component', valid: true, updates: [], creates: ['component'] },
    body: [{ name: `Probe ${marker}`, desc: `first write after restart ${marker}`, typeSlug: 'person', apiContext: marker }],
  };
}

async function inParallel<T>(items: readonly T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

// ---------------------------------------------------------------------------
// One client

interface ClientContext {
  url: string;
  key: string;
  prefix: string;
  cycle: number;
  client: number;
  stop: { killedAt: number | null };
  record: (r: WriteRecord) => void;
  settle: (r: WriteRecord, answer: Answer, killedAt: number | null) => any[];
  expected: Map<string, Expected>;
  problems: Problems;
  owned: { components: string[]; diagrams: string[] };
}

async function runClient(ctx: ClientContext): Promise<void> {
  const { components, diagrams } = ctx.owned;
  for (let seq = 0; ctx.stop.killedAt === null; seq++) {
    const marker = `${ctx.prefix}${ctx.cycle}-c${ctx.client}-s${seq}`;
    // Mostly valid writes of every shape; some made to fail a model rule half-way.
    const roll = Math.random();
    if (roll < 0.08 && components.length > 0) {
      const id = pick(components);
      const answer = await call(ctx.url, ctx.key, 'GET', `/api/external/component/${id}`);
      if (answer.status === 0) {
        const k = ctx.stop.killedAt;
        if (k === null || answer.answeredAt < k)
          ctx.problems.add(`${marker}: a read got no answer while the server was up (${answer.error})`);
        return;
      }
      const want = ctx.expected.get(id)!;
      if (answer.status !== 200 || !sameResource('component', want.content, answer.body)) {
        ctx.problems.add(`${marker}: reading back ${id}: ${answer.status} ${difference('component', want.content, answer.body)}`);
      }
      continue;
    }
    let request: { record: WriteRecord; method: string; body: unknown };
    if (roll < 0.13 && components.length > 0) request = badWrite(marker, ctx, components);
    else if (components.length < 2) request = componentWrite(marker, ctx, components, true);
    else if (roll < 0.5) request = componentWrite(marker, ctx, components, false);
    else if (roll < 0.85) request = diagramWrite(marker, ctx, components, diagrams);
    else request = modelWrite(marker, ctx, components, diagrams);
    ctx.record(request.record);
    const answer = await call(ctx.url, ctx.key, request.method, request.record.path, request.body);
    const elements = ctx.settle(request.record, answer, ctx.stop.killedAt);
    if (answer.status === 0) return; // the server is gone; this client's last request is in doubt
    for (const { kind, content } of elements) {
      const list = kind === 'component' ? components : diagrams;
      if (!list.includes(content.id)) list.push(content.id);
    }
  }
}

function base(marker: string, ctx: ClientContext, op: Op, path: string, valid = true): WriteRecord {
  return { marker, cycle: ctx.cycle, client: ctx.client, op, path, valid, updates: [], creates: [] };
}

function componentElement(marker: string, n: number, mine: readonly string[], self?: string): Record<string, unknown> {
  const others = mine.filter((id) => id !== self);
  return {
    name: `Component ${marker}.${n}`,
    desc: `${self ? 'updated' : 'created'} by ${marker}`,
    typeSlug: pick(TYPES),
    state: pick(STATES),
    apiContext: marker,
    linksTo: others.length && Math.random() < 0.6 ? sample(others, randomInt(1, Math.min(2, others.length))) : [],
  };
}

function componentWrite(marker: string, ctx: ClientContext, mine: string[], creating: boolean) {
  const record = base(marker, ctx, 'component', '/api/external/component');
  const creates = creating ? 2 : Math.random() < 0.4 ? randomInt(1, 2) : 0;
  const updates = sample(mine, creating ? 0 : creates === 0 ? randomInt(1, Math.min(2, mine.length)) : 1);
  const elements: Array<Record<string, unknown>> = [];
  updates.forEach((id, i) => {
    elements.push({ id, ...componentElement(marker, i, mine, id) });
    record.updates.push({ kind: 'component', id });
  });
  for (let i = 0; i < creates; i++) {
    const element = componentElement(marker, updates.length + i, mine);
    // Half of the new ones get a ref, and the first may link to the second by it.
    if (Math.random() < 0.5) element.ref = `r-${marker}-${i}`;
    elements.push(element);
    record.creates.push('component');
  }
  const refs = elements.map((e) => e.ref).filter(Boolean) as string[];
  if (refs.length && elements[0]!.ref !== refs[0] && Array.isArray(elements[0]!.linksTo)) {
    elements[0]!.linksTo = [...(elements[0]!.linksTo as string[]), refs[0]!];
  }
  return { record, method: Math.random() < 0.5 ? 'POST' : 'PUT', body: elements };
}

function diagramElement(marker: string, n: number, components: readonly string[]): Record<string, unknown> {
  const chosen = sample(components, randomInt(2, Math.min(4, components.length)));
  return {
    name: `Diagram ${marker}.${n}`,
    desc: `by ${marker}`,
    level: pick(['C1', 'C2', 'C3']),
    state: pick(STATES),
    apiContext: marker,
    componentInstances: chosen.map((component, i) => ({ ref: `i${i}`, component })),
    textareas: [{ text: `note of ${marker}` }],
    relations: chosen.slice(1).map((_, i) => ({
      fromComponentInstance: `i${i}`,
      toComponentInstance: `i${i + 1}`,
      label: `calls (${marker})`,
    })),
  };
}

function diagramWrite(marker: string, ctx: ClientContext, components: string[], diagrams: string[]) {
  const record = base(marker, ctx, 'diagram', '/api/external/diagram');
  const elements: Array<Record<string, unknown>> = [];
  const updates = diagrams.length && Math.random() < 0.5 ? sample(diagrams, 1) : [];
  for (const id of updates) {
    elements.push({ id, ...diagramElement(marker, elements.length, components) });
    record.updates.push({ kind: 'diagram', id });
  }
  const creates = updates.length ? randomInt(0, 1) : randomInt(1, 2);
  for (let i = 0; i < creates; i++) {
    elements.push(diagramElement(marker, elements.length, components));
    record.creates.push('diagram');
  }
  return { record, method: 'POST', body: elements };
}

/** Components and a diagram in one request; the diagram shows a component made by the same request. */
function modelWrite(marker: string, ctx: ClientContext, components: string[], diagrams: string[]) {
  const record = base(marker, ctx, 'model', '/api/external/model');
  const ref = `m-${marker}`;
  const update = pick(components);
  const diagram = diagramElement(marker, 2, components);
  (diagram.componentInstances as Array<Record<string, unknown>>)[0]!.component = ref;
  const diagramId = diagrams.length && Math.random() < 0.5 ? pick(diagrams) : undefined;
  if (diagramId) {
    diagram.id = diagramId;
    record.updates.push({ kind: 'diagram', id: diagramId });
  } else record.creates.push('diagram');
  record.updates.push({ kind: 'component', id: update });
  record.creates.push('component');
  return {
    record,
    method: 'POST',
    body: {
      components: [
        { id: update, ...componentElement(marker, 0, components, update) },
        { ref, ...componentElement(marker, 1, components) },
      ],
      diagrams: [diagram],
    },
  };
}

/** Valid elements first, then one that breaks a model rule: the whole request must be refused. */
function badWrite(marker: string, ctx: ClientContext, components: string[]) {
  const kind = pick(['component', 'diagram', 'model'] as const);
  if (kind === 'component') {
    const record = base(marker, ctx, 'bad-component', '/api/external/component', false);
    const update = pick(components);
    return {
      record,
      method: 'POST',
      body: [
        componentElement(marker, 0, components),
        { id: update, ...componentElement(marker, 1, components, update) },
        { ...componentElement(marker, 2, components), linksTo: [`no-such-${marker}`] },
      ],
    };
  }
  if (kind === 'diagram') {
    const record = base(marker, ctx, 'bad-diagram', '/api/external/diagram', false);
    const broken = diagramElement(marker, 1, components);
    broken.relations = [{ fromComponentInstance: 'i0', toComponentInstance: `ghost-${marker}` }];
    return { record, method: 'POST', body: [diagramElement(marker, 0, components), broken] };
  }
  const record = base(marker, ctx, 'bad-model', '/api/external/model', false);
  const diagram = diagramElement(marker, 1, components);
  diagram.componentInstances = [
    { ref: 'a', component: `m-${marker}` },
    { ref: 'b', component: `no-such-${marker}` },
  ];
  return {
    record,
    method: 'POST',
    body: { components: [{ ref: `m-${marker}`, ...componentElement(marker, 0, components) }], diagrams: [diagram] },
  };
}

// ---------------------------------------------------------------------------
// What --durable fsyncs, traced in the server process

/**
 * A preload for the server process that appends every fsync, directory sync and rename to
 * the file named by C4STORE_FSYNC_TRACE, synchronously, so everything done before a write
 * was answered is in the file when the answer arrives.
 */
export const FSYNC_TRACE_PRELOAD = `
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
const out = fs.openSync(process.env.C4STORE_FSYNC_TRACE, 'a');
const emit = (line) => fs.writeSync(out, line + '\\n');
const paths = new Map();
const { openSync, closeSync, fsync, fsyncSync, renameSync } = fs;
fs.openSync = function (path, ...rest) { const fd = openSync.call(fs, path, ...rest); paths.set(fd, String(path)); return fd; };
fs.closeSync = function (fd) { paths.delete(fd); return closeSync.call(fs, fd); };
fs.fsync = function (fd, cb) { emit('fsync ' + (paths.get(fd) ?? 'fd:' + fd)); return fsync.call(fs, fd, cb); };
fs.fsyncSync = function (fd) { emit('fsync ' + (paths.get(fd) ?? 'fd:' + fd)); return fsyncSync.call(fs, fd); };
fs.renameSync = function (from, to) { const r = renameSync.call(fs, from, to); emit('rename ' + from + ' ' + to); return r; };
const handles = new WeakMap();
const open = fs.promises.open;
fs.promises.open = async function (path, ...rest) { const h = await open.call(fs.promises, path, ...rest); handles.set(h, String(path)); return h; };
const probe = await open.call(fs.promises, process.execPath, 'r');
const proto = Object.getPrototypeOf(probe);
await probe.close();
const sync = proto.sync;
proto.sync = function () { emit('dirsync ' + (handles.get(this) ?? '?')); return sync.call(this); };
syncBuiltinESMExports();
`;

export interface DurableTrace {
  /** How the server was started. */
  mode: string;
  status: number;
  /** The trace of the one write, in order. */
  trace: string[];
  /** The objects the write added (`git rev-list --objects new ^old`). */
  newObjects: string[];
  /** What is missing or out of order for the write to survive a power cut; empty when all is there. */
  missing: string[];
}

/**
 * Starts the server (`--durable`, `C4STORE_DURABLE=1`, or neither), makes one write and
 * checks from the trace that, before the answer: every new object was fsynced before its
 * rename and its directory synced after it, the ref's new value fsynced before the rename
 * that publishes it, and refs/heads synced after it; all objects before the ref.
 */
export async function traceDurableWrite(mode: 'flag' | 'env' | 'off'): Promise<DurableTrace> {
  const dataDir = await scratchDir('durable-trace');
  try {
    const key = await createOrg(dataDir, SLUG);
    const gitdir = gitdirOf(dataDir, SLUG);
    const preload = join(dataDir, 'fsync-trace.mjs');
    const traceFile = join(dataDir, 'fsync-trace.log');
    await writeFile(preload, FSYNC_TRACE_PRELOAD);
    const server = await startServerProcess(dataDir, {
      nodeArgs: [`--import=${pathToFileURL(preload).href}`],
      args: mode === 'flag' ? ['--durable'] : [],
      env: { C4STORE_FSYNC_TRACE: traceFile, C4STORE_DURABLE: mode === 'env' ? '1' : '' },
    });
    try {
      const before = (await git(gitdir, 'rev-parse', 'main')).trim();
      await writeFile(traceFile, ''); // what startup did is not the write's
      const answer = await call(server.url, key, 'POST', '/api/external/component', [
        { name: 'Durable', desc: 'survives a power cut', typeSlug: 'container' },
        { name: 'Durable too', typeSlug: 'database' },
      ]);
      const trace = (await readFile(traceFile, 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((line) => line.replaceAll(gitdir, '$GIT'));
      const after = (await git(gitdir, 'rev-parse', 'main')).trim();
      const newObjects = (await git(gitdir, 'rev-list', '--objects', after, `^${before}`))
        .split('\n')
        .filter(Boolean)
        .map((l) => l.slice(0, 40));
      return { mode, status: answer.status, trace, newObjects, missing: durabilityGaps(trace, newObjects, after) };
    } finally {
      await server.stop();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** What is missing from a trace (paths relative to `$GIT`) for a commit to survive a power cut. */
export function durabilityGaps(trace: string[], newObjects: string[], commit: string): string[] {
  const missing: string[] = [];
  const at = (predicate: (line: string) => boolean, from = 0) => {
    for (let i = from; i < trace.length; i++) if (predicate(trace[i]!)) return i;
    return -1;
  };
  const refRename = at((l) => l === 'rename $GIT/refs/heads/main.lock $GIT/refs/heads/main');
  if (refRename < 0) missing.push('the ref was not published by renaming refs/heads/main.lock');
  const refFsync = at((l) => l === 'fsync $GIT/refs/heads/main.lock');
  if (refFsync < 0 || (refRename >= 0 && refFsync > refRename)) missing.push(`main.lock (${commit}) was not fsynced before its rename`);
  // A directory is synced through a FileHandle (dirsync) or through fs.fsync on its descriptor.
  const isDirSync = (line: string, dir: string) => line === `dirsync ${dir}` || line === `fsync ${dir}`;
  const refDirSync = at((l) => isDirSync(l, '$GIT/refs/heads'), Math.max(refRename, 0));
  if (refRename >= 0 && refDirSync < 0) missing.push('refs/heads was not synced after the ref was renamed');
  for (const oid of newObjects) {
    const dir = `$GIT/objects/${oid.slice(0, 2)}`;
    const rename = at((l) => l.startsWith(`rename ${dir}/tmp_obj_`) && l.endsWith(` ${dir}/${oid.slice(2)}`));
    if (rename < 0) {
      missing.push(`object ${oid} was not written through a temporary file and a rename`);
      continue;
    }
    const temp = trace[rename]!.split(' ')[1]!;
    const fsynced = at((l) => l === `fsync ${temp}`);
    if (fsynced < 0 || fsynced > rename) missing.push(`object ${oid} was not fsynced before its rename`);
    const dirSynced = at((l) => isDirSync(l, dir), rename);
    if (dirSynced < 0) missing.push(`objects/${oid.slice(0, 2)} was not synced after ${oid} was renamed into it`);
    else if (refRename >= 0 && dirSynced > refRename) missing.push(`objects/${oid.slice(0, 2)} was synced only after the ref named ${oid}`);
  }
  return missing;
}

// ---------------------------------------------------------------------------
// The torture entry point

export interface CrashTortureOptions {
  cycles?: number;
  durableCycles?: number;
  clients?: number;
  log?: (line: string) => void;
}

/** Both crash loops (default and --durable) and the durable trace; figures for torture/run.ts. */
export async function run(options: CrashTortureOptions = {}): Promise<Record<string, number>> {
  const log = options.log ?? console.log;
  const figures: Record<string, number> = {};
  let problems = 0;
  for (const durable of [false, true]) {
    const name = durable ? 'crash --durable' : 'crash';
    const cycles = durable ? (options.durableCycles ?? 20) : (options.cycles ?? 20);
    log(`${name}: ${cycles} cycles of ${options.clients ?? 50} clients, SIGKILL, restart`);
    const started = Date.now();
    const result = await crashLoop({ cycles, clients: options.clients, durable, log });
    const x = result.figures;
    for (const text of result.problems) log(`  PROBLEM ${text}`);
    if (result.problemCount > result.problems.length) log(`  … and ${result.problemCount - result.problems.length} more problems`);
    if (result.problemCount) log(`  data directory kept for inspection: ${result.dataDir}`);
    problems += result.problemCount;
    Object.assign(figures, {
      [`${name}: cycles survived`]: x.cyclesSurvived,
      [`${name}: cycles run`]: x.cyclesRun,
      [`${name}: writes sent`]: x.writesSent,
      [`${name}: writes acknowledged`]: x.acknowledged,
      [`${name}: acknowledged and found`]: x.acknowledgedFound,
      [`${name}: acknowledged lost`]: x.lostAcknowledged,
      [`${name}: refused on purpose (400)`]: x.refusedOnPurpose,
      [`${name}: refused and absent`]: x.refusedAndAbsent,
      [`${name}: unanswered (in flight at the kill)`]: x.unanswered,
      [`${name}: committed but unanswered`]: x.committedButUnanswered,
      [`${name}: half-present`]: x.halfPresent,
      [`${name}: unexpected answers (5xx etc.)`]: x.unexpectedAnswers,
      [`${name}: git fsck clean`]: x.fsckClean,
      [`${name}: git fsck runs`]: x.fsckRuns,
      [`${name}: commits on main`]: x.commits,
      [`${name}: resources compared at the tip`]: x.resourcesCompared,
      [`${name}: ?at= re-reads of acknowledged writes`]: x.atChecks,
      [`${name}: kills while holding the write lock`]: x.killsHoldingWriteLock,
      [`${name}: kills while holding main.lock`]: x.killsHoldingRefLock,
      [`${name}: max first-write delay after restart (ms)`]: x.maxFirstWriteMs,
      [`${name}: mean first-write delay after restart (ms)`]: x.meanFirstWriteMs,
      [`${name}: max wait for the dead lock to turn stale (ms)`]: x.maxDeadLockWaitMs,
      [`${name}: max first write answered after max(sent, lock stale) (ms)`]: x.maxAnsweredAfterStaleMs,
      [`${name}: max kill-to-first-acknowledged-write (ms)`]: x.maxKillToFirstWriteMs,
      [`${name}: max first request after restart, loading the model (ms)`]: x.maxModelLoadMs,
      [`${name}: acknowledged writes per second`]: x.writesPerSecond,
      [`${name}: seconds`]: round((Date.now() - started) / 1000),
    });
  }
  for (const mode of ['flag', 'env', 'off'] as const) {
    const result = await traceDurableWrite(mode);
    const label = mode === 'flag' ? '--durable' : mode === 'env' ? 'C4STORE_DURABLE=1' : 'default';
    const syncs = result.trace.filter((l) => l.startsWith('fsync') || l.startsWith('dirsync')).length;
    figures[`durable trace ${label}: fsyncs per write`] = syncs;
    if (mode === 'off') {
      if (syncs !== 0) {
        problems++;
        log(`  PROBLEM default mode fsyncs: ${result.trace.join(' | ')}`);
      }
    } else {
      figures[`durable trace ${label}: gaps`] = result.missing.length;
      problems += result.missing.length;
      for (const gap of result.missing) log(`  PROBLEM ${label}: ${gap}`);
    }
  }
  figures['crash: problems'] = problems;
  return figures;
}
