/**
 * Run by test/store.test.ts: starts writing a temporary file the way the caches and replaceFile
 * do, then exits at once (as a SIGTERM's shutdown may, in the middle of a cache write), after
 * `spin` iterations of busy work, so that the exit meets the open at varying points.
 */
import { pbkdf2 } from 'node:crypto';
import { openTemporaryFile, trackTemporaryFile } from '../../src/store/durable-files.js';

const [temp, spin] = process.argv.slice(2);
trackTemporaryFile(temp!);
// The thread pool busy, as a running server's often is (file reads, fsyncs, hashing): an open
// done there waits its turn, and the exit comes first. Without it the race was seldom met.
for (let i = 0; i < 4; i++) pbkdf2('x', 'y', 1000, 32, 'sha256', () => {});
openTemporaryFile(temp!, 0o644).catch(() => {});
let sum = 0;
for (let i = 0; i < Number(spin); i++) sum += i;
process.exit(sum >= 0 ? 0 : 1);
