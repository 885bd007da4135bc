import { metricMeter } from '@temporalio/workflow';
import { WORKFLOW_METRIC } from '../schemas/workflow-metrics';

// Metrics only the workflow knows: why a case went to a person, and what a case cost when it
// closed. They go through the SDK's workflow meter, which emits nothing while a history is
// replayed (so a replay or a cache eviction does not count a case twice) and adds no command.
// The Temporal runtime exports them beside its own (merged into the worker's /metrics), under
// the names in WORKFLOW_METRIC, with namespace, taskQueue and workflowType labels.

/** Why a case was handed to a person: the label of the hand-off counter, a small fixed set. */
export type HandOffKind =
  | 'desk_refused'
  | 'decision_failed'
  | 'transcript_invalid'
  | 'model_failed'
  | 'tool_unavailable'
  | 'empty_replies'
  | 'model_declined'
  | 'record_failed'
  | 'reply_held'
  | 'refund_failed';

/** Counts one hand-over to a person, by kind. */
export function countHandOff(kind: HandOffKind): void {
  metricMeter.createCounter(WORKFLOW_METRIC.handOffs, 'cases', 'Cases handed to a person (needs_human), by reason.').add(1, { reason: kind });
}

/** Records what one closed case cost in model calls, in US dollars. */
export function recordCaseCost(costUsd: number): void {
  metricMeter.createHistogram(WORKFLOW_METRIC.caseCost, 'float', 'usd', 'Model cost of one closed case in US dollars, at the configured prices.').record(costUsd);
}
