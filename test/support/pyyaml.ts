import { pythonWith, runPython } from './python.js';
import { run } from './server.js';

/** PyYAML, a real YAML 1.1 reader (what most Python clients use), for tests: Debian's python3-yaml (python.ts). */

const MODULE = 'yaml';
const PACKAGE = 'python3-yaml';

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
  return JSON.parse(await runPython(MODULE, PACKAGE, LOAD, JSON.stringify(texts), 'PyYAML failed'));
}

/** What PyYAML's `safe_dump` writes for a JSON value (as a YAML 1.1 client would send it). */
export async function pyyamlDump(value: unknown, options = ''): Promise<string> {
  const python = await pythonWith(MODULE, PACKAGE);
  const { stdout } = await run(python, [
    '-c',
    `import json, sys, yaml\nsys.stdout.write(yaml.safe_dump(json.loads(sys.argv[1])${options ? `, ${options}` : ''}))`,
    JSON.stringify(value),
  ]);
  return stdout;
}
