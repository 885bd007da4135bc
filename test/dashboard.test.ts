import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { metricNamesIn, readYaml, unknownMetricNames } from './support/metric-names';

// deploy/grafana: the dashboard Grafana provisions in the compose profile "observability". It
// parses, every panel queries the provisioned Prometheus with PromQL that Prometheus's own
// parser accepts (each expression checked by promtool as a recording rule), over metrics
// casework exports, and it shows what the support team watches.

const ROOT = resolve(__dirname, '..');
const DASHBOARD = resolve(ROOT, 'deploy/grafana/casework-dashboard.json');

interface Target {
  refId: string;
  expr: string;
  datasource?: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  description?: string;
  datasource?: { type: string; uid: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: Target[];
}

const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { uid: string; title: string; panels: Panel[] };
const queried = dashboard.panels.filter((p) => p.type !== 'row');
const exprs = queried.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

const promtool = spawnSync(process.env.PROMTOOL ?? 'promtool', ['--version']).status === 0 ? (process.env.PROMTOOL ?? 'promtool') : undefined;
const missing = 'promtool is not installed: run `sudo scripts/install-promtool.sh` (Debian package prometheus) or set PROMTOOL';
const skipWithoutPromtool = !promtool && process.env.CI !== 'true' ? missing : false;

describe('the Grafana dashboard (deploy/grafana)', () => {
  test('every panel queries the provisioned Prometheus data source', () => {
    const provisioned = readYaml(resolve(ROOT, 'deploy/grafana/provisioning/datasources/prometheus.yml'));
    assert.ok(!provisioned.problem, provisioned.problem);
    const [source] = (provisioned.value as { datasources: { uid: string; type: string }[] }).datasources;
    assert.equal(source?.type, 'prometheus');
    assert.ok(queried.length > 0);
    for (const panel of queried) {
      assert.equal(panel.datasource?.uid, source.uid, `${panel.title}: data source`);
      assert.ok(panel.targets && panel.targets.length > 0, `${panel.title} has no query`);
      for (const target of panel.targets) assert.ok(target.expr.trim(), `${panel.title} ${target.refId}: empty expr`);
    }
  });

  test('panel ids are unique and no two panels overlap on the grid', () => {
    const ids = dashboard.panels.map((p) => p.id);
    assert.equal(new Set(ids).size, ids.length);
    const cells = new Map<string, string>();
    for (const panel of dashboard.panels) {
      const { h, w, x, y } = panel.gridPos;
      assert.ok(x >= 0 && x + w <= 24, `${panel.title} fits the 24-column grid`);
      for (let row = y; row < y + h; row++) {
        for (let col = x; col < x + w; col++) {
          const taken = cells.get(`${row}:${col}`);
          assert.equal(taken, undefined, `${panel.title} overlaps ${taken}`);
          cells.set(`${row}:${col}`, panel.title);
        }
      }
    }
  });

  test('every metric a panel reads is one casework exports', () => {
    for (const { panel, expr } of exprs) {
      const names = metricNamesIn(expr);
      assert.ok(names.length > 0, `${panel}: ${expr} reads no casework metric`);
      assert.deepEqual(unknownMetricNames(names), [], `${panel}: ${expr}`);
    }
  });

  test('every query is PromQL that Prometheus parses (promtool, as recording rules)', { skip: skipWithoutPromtool }, () => {
    assert.ok(promtool, missing);
    const dir = mkdtempSync(join(tmpdir(), 'casework-dashboard-'));
    try {
      const rules = exprs.map(({ expr }, i) => `      - record: casework:dashboard_query_${i}\n        expr: ${JSON.stringify(expr)}`).join('\n');
      writeFileSync(join(dir, 'queries.yml'), `groups:\n  - name: dashboard\n    rules:\n${rules}\n`);
      const run = spawnSync(promtool, ['check', 'rules', 'queries.yml'], { cwd: dir, encoding: 'utf8' });
      assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
      assert.match(run.stdout, new RegExp(`SUCCESS: ${exprs.length} rules found`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('shows what the support team watches: cases, approvals, hand-offs, desks, cost, memory and the worker', () => {
    const all = exprs.map((e) => e.expr).join('\n');
    for (const needed of [
      'casework_investigations_open',
      'casework_approval_oldest_wait_seconds',
      'casework_approval_auto_deny_seconds',
      'casework_handoffs',
      'casework_desk_deliveries_total',
      'casework_desk_post_failures_total',
      'casework_case_cost_usd_sum',
      'casework_model_input_tokens_total',
      'activity="loadMemory"',
      'temporal_sticky_cache_size',
      'temporal_workflow_task_replay_latency_bucket',
    ]) {
      assert.ok(all.includes(needed), `no panel reads ${needed}`);
    }
    for (const outcome of ['accepted', 'duplicate', 'parked', 'refused']) {
      assert.ok(
        queried.some((p) => p.description?.includes(outcome)),
        `the deliveries panel says what ${outcome} is`,
      );
    }
  });
});
