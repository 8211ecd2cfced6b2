import { spawn } from 'node:child_process';
import { run } from './server.js';

/**
 * Python's reference readers for tests (PyYAML, prometheus_client's parser), so that what the
 * service writes is checked by what its clients read, not by a parser of our own. A Python that
 * can import the reader is found once per module, installing its Debian package when none here
 * can (the lock timeout lets several installs on one machine wait for each other).
 */

const PYTHONS = ['python3', '/usr/bin/python3'];
const found = new Map<string, Promise<string>>();

async function canImport(python: string, module: string): Promise<boolean> {
  try {
    await run(python, ['-c', `import ${module}`]);
    return true;
  } catch {
    return false;
  }
}

async function install(debPackage: string): Promise<void> {
  const apt = (...args: string[]) =>
    run('apt-get', ['-o', 'DPkg::Lock::Timeout=300', ...args], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  try {
    await apt('install', '-y', debPackage);
  } catch {
    // A fresh machine may have no package lists yet.
    await apt('update');
    await apt('install', '-y', debPackage);
  }
}

async function findPython(module: string, debPackage: string): Promise<string> {
  for (const python of PYTHONS) if (await canImport(python, module)) return python;
  await install(debPackage);
  for (const python of PYTHONS) if (await canImport(python, module)) return python;
  throw new Error(`${debPackage} is installed but no python3 can import ${module}`);
}

/** A Python interpreter that can `import module`, installing Debian's `debPackage` if needed. */
export function pythonWith(module: string, debPackage: string): Promise<string> {
  let python = found.get(module);
  if (python === undefined) {
    python = findPython(module, debPackage);
    found.set(module, python);
  }
  return python;
}

/**
 * Runs `program` (Python source) with `module` importable and `input` on its standard input:
 * its standard output, or an error that starts with `failure` and carries its standard error.
 */
export async function runPython(module: string, debPackage: string, program: string, input: string, failure: string): Promise<string> {
  const python = await pythonWith(module, debPackage);
  const child = spawn(python, ['-c', program], { stdio: ['pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  child.stdin.end(input);
  const code = await exited;
  if (code !== 0) throw new Error(`${failure} (${code}): ${Buffer.concat(err).toString()}`);
  return Buffer.concat(out).toString('utf8');
}
