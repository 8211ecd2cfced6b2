import { Transform } from 'node:stream';
import { runGit } from '../store/git-cli.js';

/**
 * A protocol v2 fetch held to what protocol v0 serves: a commit no ref reaches (a draft's commits
 * force-pushed away, until git gc prunes them) is refused to a fetch by its id.
 *
 * In v0, upload-pack with uploadpack.allowReachableSHA1InWant refuses a `want` of a commit that no
 * ref reaches (`not our ref`); in v2 it takes any object the repository holds ("wants can be
 * anything", gitprotocol-v2), and no setting of git's narrows that. So the `want` lines of a v2
 * fetch are read here on their way to upload-pack, and the request's last pkt-line (the flush that
 * ends it, without which upload-pack answers nothing) is held until they are checked with the
 * same walk v0's check makes (`git rev-list <wants> --not --all`: a commit no ref reaches is
 * listed). Blobs and trees are let through, as v0's check lets them (it walks commits only): a
 * partial clone asks for files by id.
 */

/** The most a pkt-line may carry (git's LARGE_PACKET_DATA_MAX). */
const MAX_PAYLOAD = 65516;
/** A want line of a v2 fetch: SHA-1 or SHA-256 ids. */
const WANT = /^want ([0-9a-f]{40}|[0-9a-f]{64})\n?$/;
/** The bytes held back: the flush-pkt that ends a request. */
const HELD = 4;

/**
 * The request body, passed on to upload-pack as it comes, its last four bytes held until the
 * `want`s of its command (the first: upload-pack serves one command a request over HTTP) are
 * checked. `refuse` is called with a commit no ref reaches, and nothing more is passed on.
 */
export function reachableWantsOnly(gitdir: string, refuse: (oid: string) => void): Transform {
  const wants: string[] = [];
  // The bytes of the first command not yet read as pkt-lines; null once it has ended (or is no
  // well-formed request: upload-pack refuses that itself).
  let pending: Buffer | null = Buffer.alloc(0);
  let held = Buffer.alloc(0);
  const read = (chunk: Buffer) => {
    if (pending === null) return;
    pending = Buffer.concat([pending, chunk]);
    while (pending !== null && pending.length >= 4) {
      const length = Number.parseInt(pending.subarray(0, 4).toString('latin1'), 16);
      if (!/^[0-9a-f]{4}$/.test(pending.subarray(0, 4).toString('latin1')) || length === 3 || length > MAX_PAYLOAD + 4) {
        pending = null;
        return;
      }
      if (length === 0) {
        // The flush that ends the command.
        pending = null;
        return;
      }
      if (length < 4) {
        // A delimiter (0001) between the command's capabilities and its arguments.
        pending = pending.subarray(4);
        continue;
      }
      if (pending.length < length) return;
      const line = pending.subarray(4, length).toString('latin1');
      const want = WANT.exec(line);
      if (want) wants.push(want[1]);
      pending = pending.subarray(length);
    }
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      read(chunk);
      const all = Buffer.concat([held, chunk]);
      held = all.subarray(Math.max(0, all.length - HELD));
      done(null, all.subarray(0, all.length - held.length));
    },
    flush(done) {
      unreachableCommit(gitdir, wants).then(
        (oid) => {
          if (oid === undefined) done(null, held);
          else {
            refuse(oid);
            done();
          }
        },
        // git could not say (it failed otherwise than on an object it does not hold): upload-pack
        // answers as git would, rather than the fetch hanging on a request never ended.
        () => done(null, held),
      );
    },
  });
}

/** The first of `wants` that is a commit no ref reaches, if any. */
async function unreachableCommit(gitdir: string, wants: readonly string[]): Promise<string | undefined> {
  if (wants.length === 0) return undefined;
  // Objects the repository does not hold are upload-pack's to refuse (`not our ref`) as before.
  const { stdout, code } = await runGit(gitdir, ['rev-list', '--stdin', '--not', '--all'], {
    input: `${[...new Set(wants)].join('\n')}\n`,
    okCodes: [128],
  });
  if (code !== 0) return undefined;
  const listed = new Set(stdout.toString('utf8').split('\n').filter(Boolean));
  return wants.find((oid) => listed.has(oid));
}
