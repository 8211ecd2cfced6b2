import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * The Prometheus text format read by the reference Python client's parser
 * (`prometheus_client.parser`), so that /metrics is checked by what a scraper reads, not by a
 * parser of our own. Installed from Debian's python3-prometheus-client when no Python here can
 * import it.
 */

const run = promisify(execFile);
const PYTHONS = ['/usr/bin/python3', 'python3'];
let found: Promise<string> | undefined;

async function canImport(python: string): Promise<boolean> {
  try {
    await run(python, ['-c', 'import prometheus_client.parser']);
    return true;
  } catch {
    return false;
  }
}

async function install(): Promise<void> {
  const apt = (...args: string[]) =>
    run('apt-get', ['-o', 'DPkg::Lock::Timeout=300', ...args], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  try {
    await apt('install', '-y', 'python3-prometheus-client');
  } catch {
    await apt('update');
    await apt('install', '-y', 'python3-prometheus-client');
  }
}

async function findPython(): Promise<string> {
  for (const python of PYTHONS) if (await canImport(python)) return python;
  await install();
  for (const python of PYTHONS) if (await canImport(python)) return python;
  throw new Error('python3-prometheus-client is installed but no python3 can import it');
}

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface MetricFamily {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

const PARSE = `
import json, math, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for family in text_string_to_metric_families(sys.stdin.read()):
    out.append({'name': family.name, 'type': family.type, 'help': family.documentation,
                'samples': [{'name': s.name, 'labels': s.labels,
                             'value': s.value if math.isfinite(s.value) else str(s.value)} for s in family.samples]})
sys.stdout.write(json.dumps(out))
`;

/** The metric families of an exposition, by name; throws when the text is not valid. */
export async function parsePrometheusText(text: string): Promise<Map<string, MetricFamily>> {
  found ??= findPython();
  const python = await found;
  const child = execFile(python, ['-c', PARSE], { maxBuffer: 64 * 1024 * 1024 });
  const output = new Promise<string>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`prometheus_client could not parse /metrics: ${stderr}`)),
    );
  });
  child.stdin!.end(text);
  const families = JSON.parse(await output) as MetricFamily[];
  return new Map(families.map((family) => [family.name, family]));
}

/** The value of the one sample named `name` whose labels include `labels`. */
export function sampleValue(families: Map<string, MetricFamily>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const family of families.values()) {
    for (const sample of family.samples) {
      if (sample.name !== name) continue;
      if (Object.entries(labels).every(([key, value]) => sample.labels[key] === value)) return sample.value;
    }
  }
  return undefined;
}
