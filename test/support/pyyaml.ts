import { run } from './server.js';

/**
 * PyYAML, a real YAML 1.1 reader (what most Python clients use), for tests. Installed from
 * Debian's python3-yaml when no Python here can import it; the lock timeout lets several
 * installs on one machine wait for each other instead of failing.
 */

const PYTHONS = ['python3', '/usr/bin/python3'];
let found: Promise<string> | undefined;

async function canImportYaml(python: string): Promise<boolean> {
  try {
    await run(python, ['-c', 'import yaml']);
    return true;
  } catch {
    return false;
  }
}

async function install(): Promise<void> {
  const apt = (...args: string[]) =>
    run('apt-get', ['-o', 'DPkg::Lock::Timeout=300', ...args], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  try {
    await apt('install', '-y', 'python3-yaml');
  } catch {
    // A fresh machine may have no package lists yet.
    await apt('update');
    await apt('install', '-y', 'python3-yaml');
  }
}

async function findPython(): Promise<string> {
  for (const python of PYTHONS) if (await canImportYaml(python)) return python;
  await install();
  for (const python of PYTHONS) if (await canImportYaml(python)) return python;
  throw new Error('python3-yaml is installed but no python3 can import yaml');
}

/** A Python interpreter that can `import yaml`, installing python3-yaml if needed. */
export function pyyamlPython(): Promise<string> {
  found ??= findPython();
  return found;
}

const LOAD = `
import json, sys, yaml
texts = json.loads(sys.stdin.buffer.read().decode('utf-8'))
out = []
for text in texts:
    try:
        out.append({'value': yaml.safe_load(text)})
    except Exception as e:
        out.append({'error': type(e).__name__ + ': ' + str(e)})
sys.stdout.write(json.dumps(out, allow_nan=False, default=lambda v: {'python': type(v).__name__, 'repr': repr(v)}))
`;

/** What `yaml.safe_load` gives for each text (one Python process for all of them), as JSON. */
export async function pyyamlLoad(texts: string[]): Promise<Array<{ value?: unknown; error?: string }>> {
  const python = await pyyamlPython();
  const { spawn } = await import('node:child_process');
  const child = spawn(python, ['-c', LOAD], { stdio: ['pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  child.stdin.end(JSON.stringify(texts));
  const code = await exited;
  if (code !== 0) throw new Error(`PyYAML failed (${code}): ${Buffer.concat(err).toString()}`);
  return JSON.parse(Buffer.concat(out).toString('utf8'));
}

/** What PyYAML's `safe_dump` writes for a JSON value (as a YAML 1.1 client would send it). */
export async function pyyamlDump(value: unknown, options = ''): Promise<string> {
  const python = await pyyamlPython();
  const { stdout } = await run(python, [
    '-c',
    `import json, sys, yaml\nsys.stdout.write(yaml.safe_dump(json.loads(sys.argv[1])${options ? `, ${options}` : ''}))`,
    JSON.stringify(value),
  ]);
  return stdout;
}
