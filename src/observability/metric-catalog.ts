import { WORKFLOW_METRIC } from '../schemas/workflow-metrics';
import { CaseworkMetrics } from './metrics';

// Every metric name casework's /metrics carries that dashboards and alert rules may read, so a
// test can check each rule and panel against it and a renamed metric breaks the build.

/**
 * The Temporal runtime's own metrics the dashboard and rules read (latencies in milliseconds).
 * Each appears in a running worker's scrape from its first workflow task on (test/metrics.test.ts).
 */
export const TEMPORAL_RUNTIME_METRICS = [
  'temporal_num_pollers',
  'temporal_sticky_cache_size',
  'temporal_sticky_cache_hit',
  'temporal_workflow_task_replay_latency',
  'temporal_workflow_task_execution_latency',
  'temporal_workflow_task_schedule_to_start_latency',
  'temporal_worker_task_slots_available',
] as const;

/** The names casework registers (its registry, with the worker's limits), the workflow's and the runtime's ones used. */
export function exportedMetricNames(): Set<string> {
  const metrics = new CaseworkMetrics({ defaultMetrics: false });
  metrics.setLimits({ approvalReminderSeconds: 0, approvalAutoDenySeconds: 0, caseBudgetUsd: 0 });
  const own = metrics.registry.getMetricsAsArray().map((m) => m.name);
  return new Set([...own, ...Object.values(WORKFLOW_METRIC), ...TEMPORAL_RUNTIME_METRICS]);
}
