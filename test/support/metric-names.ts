import { spawnSync } from 'node:child_process';
import { exportedMetricNames } from '../../src/observability/metric-catalog';

// Shared by the alert-rule and dashboard tests: the metric names a PromQL expression reads,
// checked against the names casework really exports, so a renamed metric breaks the build.

const SUFFIXES = ['_bucket', '_sum', '_count'];

/** The casework_ and temporal_ metric names `expr` reads (label names and values never start so). */
export function metricNamesIn(expr: string): string[] {
  // Quoted strings are label values or regexes (error=~"DeskAuthError"), not metric names.
  const unquoted = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  return [...new Set([...unquoted.matchAll(/\b(?:casework|temporal)_[a-z0-9_]+\b/g)].map((m) => m[0]))];
}

/** The names among `names` that casework does not export (a histogram's _bucket/_sum/_count count as its own). */
export function unknownMetricNames(names: string[]): string[] {
  const known = exportedMetricNames();
  return names.filter((name) => {
    if (known.has(name)) return false;
    const suffix = SUFFIXES.find((s) => name.endsWith(s));
    return !(suffix && known.has(name.slice(0, -suffix.length)));
  });
}

/** A YAML file as JSON, read by PyYAML's safe loader (as test/compose.test.ts does). */
export function readYaml(path: string): { value?: unknown; problem?: string } {
  const script = 'import json, sys, yaml\nprint(json.dumps(yaml.safe_load(open(sys.argv[1]))))';
  const run = spawnSync('python3', ['-c', script, path], { encoding: 'utf8' });
  if (run.error) return { problem: `python3 is not available (${run.error.message})` };
  if (run.status !== 0) {
    if (/No module named .?yaml/.test(run.stderr)) return { problem: 'PyYAML is not installed (apt-get install python3-yaml)' };
    throw new Error(`${path} does not parse as YAML:\n${run.stderr}`);
  }
  return { value: JSON.parse(run.stdout) };
}
