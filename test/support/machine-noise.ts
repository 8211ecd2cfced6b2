import { spawn } from 'node:child_process';
import { once } from 'node:events';

/**
 * How late a process that does nothing else gets its timers, measured in a child process for as
 * long as it runs: what the machine itself (other work on the same cores) adds to any latency
 * measured beside it. The server under test holding its event loop does not show here; another
 * test suite on the same cores does. stop() resolves with the worst lateness in ms.
 */
export function machineNoise(intervalMs = 10): { stop(): Promise<number> } {
  const script = `
    let due = performance.now() + ${intervalMs};
    let worst = 0;
    const tick = () => {
      const now = performance.now();
      worst = Math.max(worst, now - due);
      due = now + ${intervalMs};
      setTimeout(tick, ${intervalMs});
    };
    setTimeout(tick, ${intervalMs});
    process.stdin.on('data', () => {});
    process.stdin.on('end', () => { process.stdout.write(String(worst)); process.exit(0); });
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  return {
    async stop() {
      const exited = once(child, 'close');
      child.stdin.end();
      await exited;
      const worst = Number(output);
      return Number.isFinite(worst) ? worst : 0;
    },
  };
}
