// Names of the metrics workflow code emits through the SDK's workflow meter. A constants module
// of its own, so the workflow bundle and the operator side (dashboards, alert rules, their
// tests) share the names without the bundle importing prom-client.

/** Metrics the Investigation workflow emits; the Temporal runtime exports them as named here. */
export const WORKFLOW_METRIC = {
  /** Counter, labels {reason}: cases handed to a person (needs_human), by why. */
  handOffs: 'casework_handoffs',
  /** Histogram (US dollars): the model cost of one closed case. */
  caseCost: 'casework_case_cost_usd',
} as const;

/** The bucket bounds of the case-cost histogram, in US dollars (the runtime's defaults suit milliseconds). */
export const CASE_COST_BUCKETS_USD = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10];
