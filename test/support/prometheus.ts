import { runPython } from './python.js';

/**
 * The Prometheus text format read by the reference Python client's parser
 * (`prometheus_client.parser`), so that /metrics is checked by what a scraper reads, not by a
 * parser of our own: Debian's python3-prometheus-client (python.ts).
 */

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
  const output = await runPython(
    'prometheus_client.parser',
    'python3-prometheus-client',
    PARSE,
    text,
    'prometheus_client could not parse /metrics',
  );
  const families = JSON.parse(output) as MetricFamily[];
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
