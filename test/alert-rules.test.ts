import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, test } from 'node:test';
import { metricNamesIn, readYaml, unknownMetricNames } from './support/metric-names';

// deploy/prometheus: the alert rules, checked by Prometheus's own tool (promtool, from Debian's
// prometheus package; scripts/install-promtool.sh installs it, .ci/run calls that), their
// fixtures run, every metric a rule reads is one casework exports, and every alert has its
// runbook entry in docs/operations.md.

const ROOT = resolve(__dirname, '..');
const DIR = resolve(ROOT, 'deploy/prometheus');
const RULES = resolve(DIR, 'casework-rules.yml');

function findPromtool(): string | undefined {
  const candidate = process.env.PROMTOOL ?? 'promtool';
  const probe = spawnSync(candidate, ['--version'], { encoding: 'utf8' });
  return probe.status === 0 ? candidate : undefined;
}

const promtool = findPromtool();
// Under CI a missing promtool is a failure, not a quiet skip.
const missing = 'promtool is not installed: run `sudo scripts/install-promtool.sh` (Debian package prometheus) or set PROMTOOL';
const skipWithoutPromtool = !promtool && process.env.CI !== 'true' ? missing : false;

function runPromtool(args: string[]): { status: number | null; output: string } {
  assert.ok(promtool, missing);
  const run = spawnSync(promtool, args, { cwd: DIR, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

function rules(): Rule[] {
  const parsed = readYaml(RULES);
  assert.ok(!parsed.problem, `cannot read the rules: ${parsed.problem}`);
  return (parsed.value as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
}

describe('alert rules (deploy/prometheus)', () => {
  test('promtool accepts the rules and the Prometheus configuration that loads them', { skip: skipWithoutPromtool }, () => {
    const check = runPromtool(['check', 'rules', 'casework-rules.yml']);
    assert.equal(check.status, 0, check.output);
    assert.match(check.output, /SUCCESS: \d+ rules found/);
    // Syntax only: the scrape key file exists only inside the container (the rules are checked above).
    const config = runPromtool(['check', 'config', '--syntax-only', 'prometheus.yml']);
    assert.equal(config.status, 0, config.output);
  });

  test('every alert fires on its fixture and stays quiet on the healthy series beside it (promtool test rules)', { skip: skipWithoutPromtool }, () => {
    const run = runPromtool(['test', 'rules', 'casework-rules.test.yml']);
    assert.equal(run.status, 0, run.output);
    assert.match(run.output, /SUCCESS/);
  });

  test('every alert has a fixture', () => {
    const fixtures = readFileSync(resolve(DIR, 'casework-rules.test.yml'), 'utf8');
    for (const rule of rules()) {
      if (rule.alert) assert.match(fixtures, new RegExp(`alertname: ${rule.alert}\\b`), `${rule.alert} has no fixture in casework-rules.test.yml`);
    }
  });

  test('covers what the support team acts on', () => {
    const alerts = new Set(rules().map((r) => r.alert));
    for (const name of [
      'CaseworkApprovalPastReminder',
      'CaseworkNeedsHumanRising',
      'CaseworkDeskRefusingPosts',
      'CaseworkDeliveriesParked',
      'CaseworkWorkerNotPolling',
      'CaseworkPostgresUnreachable',
      'CaseworkTemporalUnreachable',
      'CaseworkCostPerCaseOverBudget',
    ]) {
      assert.ok(alerts.has(name), `no alert ${name}`);
    }
  });

  test('every metric a rule reads is one casework exports', () => {
    for (const rule of rules()) {
      const names = metricNamesIn(rule.expr);
      assert.ok(names.length > 0 || /\bup\{/.test(rule.expr), `${rule.alert} reads no casework metric`);
      assert.deepEqual(unknownMetricNames(names), [], `${rule.alert} reads metrics casework does not export`);
    }
  });

  test('a renamed metric is caught: the check knows the difference', () => {
    assert.deepEqual(unknownMetricNames(metricNamesIn('max(casework_approvals_waiting_total) > 0')), ['casework_approvals_waiting_total']);
    assert.deepEqual(unknownMetricNames(metricNamesIn('histogram_quantile(0.9, sum by (le) (rate(casework_activity_duration_seconds_bucket[5m])))')), []);
    assert.deepEqual(metricNamesIn('x{error=~"casework_not_a_metric"}'), [], 'label values are not metric names');
  });

  test('every alert has a severity, a summary and a runbook entry in docs/operations.md', () => {
    const runbook = readFileSync(resolve(ROOT, 'docs/operations.md'), 'utf8');
    const anchors = new Set(
      [...runbook.matchAll(/^#{2,4} (.+)$/gm)].map((m) =>
        m[1]!
          .trim()
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-'),
      ),
    );
    for (const rule of rules()) {
      if (!rule.alert) continue;
      assert.match(rule.labels?.severity ?? '', /^(warning|critical)$/, `${rule.alert}: severity`);
      assert.ok(rule.annotations?.summary, `${rule.alert}: summary`);
      const [, anchor] = /^docs\/operations\.md#(.+)$/.exec(rule.annotations?.runbook_url ?? '') ?? [];
      assert.ok(anchor, `${rule.alert}: runbook_url points into docs/operations.md`);
      assert.ok(anchors.has(anchor), `${rule.alert}: docs/operations.md has no section #${anchor}`);
    }
    for (const alert of rules().filter((r) => r.alert)) assert.ok(runbook.includes(alert.alert!), `docs/operations.md names ${alert.alert}`);
  });
});
