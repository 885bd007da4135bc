import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { createDeskMetrics, type DeskMetrics } from '../desk/metrics';
import type { ModelPurpose, TokenUsage } from '../schemas/model';

// casework's own Prometheus metrics. One registry per process (processMetrics), so several
// workers created in one process (tests, the local stack) add to the same counters instead of
// registering the same names twice. Every label has a small, fixed set of values: purpose,
// outcome, token kind, tool name and case status; never a customer, ticket or workflow id.

/** Kinds of input token, as the Messages API bills them. */
export type InputTokenKind = 'uncached' | 'cache_write' | 'cache_read';

/** What became of one model call attempt. */
export type ModelOutcome = 'ok' | 'rate_limited' | 'overloaded' | 'unavailable' | 'connection_failed' | 'timed_out' | 'rejected' | 'error';

/** What became of one tool activity attempt: a normal result, a result with is_error, or a thrown error Temporal retries. */
export type ToolOutcomeLabel = 'ok' | 'error' | 'failed';

/** Counts of open investigations by case status, from Temporal's visibility store. */
export interface OpenInvestigationCounts {
  investigating: number;
  awaiting_approval: number;
  waiting_for_customer: number;
}

/** The case statuses the open-investigation gauge reports, one label value each. */
const OPEN_STATUSES = ['investigating', 'awaiting_approval', 'waiting_for_customer'] as const satisfies readonly (keyof OpenInvestigationCounts)[];

/** Where the open-investigation gauges read from; set by startMetricsEndpoint. */
export type OpenInvestigationSource = () => Promise<OpenInvestigationCounts>;

/** The names casework's metrics are exported under, for dashboards, alerts and tests. */
export const METRIC = {
  modelCalls: 'casework_model_calls_total',
  modelInputTokens: 'casework_model_input_tokens_total',
  modelOutputTokens: 'casework_model_output_tokens_total',
  modelCallSeconds: 'casework_model_call_duration_seconds',
  cacheHitRatio: 'casework_prompt_cache_hit_ratio',
  toolCalls: 'casework_tool_calls_total',
  toolErrors: 'casework_tool_errors_total',
  toolCallSeconds: 'casework_tool_call_duration_seconds',
  approvalsWaiting: 'casework_approvals_waiting',
  investigationsOpen: 'casework_investigations_open',
  visibilityErrors: 'casework_visibility_count_errors_total',
  eventsRefused: 'casework_events_refused_total',
  runsRecovered: 'casework_runs_recovered_total',
} as const;

/** casework's metrics and the registry they are exported from. */
export class CaseworkMetrics {
  readonly registry = new Registry();
  private readonly inputTotals = new Map<string, Record<InputTokenKind, number>>();
  private openSource: OpenInvestigationSource | undefined;

  /** Desk webhooks received / rejected by reason, replies and notes posted / failed by desk (names in DESK_METRICS). */
  readonly desk: DeskMetrics = createDeskMetrics(this.registry);

  readonly modelCalls = new Counter({
    name: METRIC.modelCalls,
    help: 'Model (Messages API) call attempts, by purpose (investigate, compact, bulk_read) and outcome.',
    labelNames: ['purpose', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly modelInputTokens = new Counter({
    name: METRIC.modelInputTokens,
    help: 'Input tokens sent to the model, by purpose and kind: uncached, cache_write (cache creation) and cache_read.',
    labelNames: ['purpose', 'kind'] as const,
    registers: [this.registry],
  });
  readonly modelOutputTokens = new Counter({
    name: METRIC.modelOutputTokens,
    help: 'Output tokens the model generated, by purpose.',
    labelNames: ['purpose'] as const,
    registers: [this.registry],
  });
  readonly modelCallSeconds = new Histogram({
    name: METRIC.modelCallSeconds,
    help: 'Duration of model call attempts in seconds, by purpose.',
    labelNames: ['purpose'] as const,
    buckets: [0.05, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 80, 160],
    registers: [this.registry],
  });
  readonly toolCalls = new Counter({
    name: METRIC.toolCalls,
    help: 'Tool activity attempts, by tool and outcome: ok, error (a tool_result with is_error the model reads) or failed (threw; Temporal retries).',
    labelNames: ['tool', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly toolErrors = new Counter({
    name: METRIC.toolErrors,
    help: 'Tool errors, by tool and kind: result (is_error returned to the model) or exception (the attempt threw).',
    labelNames: ['tool', 'kind'] as const,
    registers: [this.registry],
  });
  readonly toolCallSeconds = new Histogram({
    name: METRIC.toolCallSeconds,
    help: 'Duration of tool activity attempts in seconds, by tool.',
    labelNames: ['tool'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly visibilityErrors = new Counter({
    name: METRIC.visibilityErrors,
    help: 'Failed visibility counts behind the approvals and open-investigation gauges (the gauges then keep their last value).',
    registers: [this.registry],
  });

  readonly eventsRefused = new Counter({
    name: METRIC.eventsRefused,
    help: "Ticket events refused at the gate before reaching Temporal, by reason: ticket_owner (another customer's ticket) or event_reused (an event id sent again with another body).",
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly runsRecovered = new Counter({
    name: METRIC.runsRecovered,
    help: "Broken investigation runs (FAILED, TERMINATED, TIMED_OUT, CANCELLED: a bug) replaced by a recovered run on the ticket's next event, by how the run ended and how much of its transcript was carried (carried, from_history, unavailable).",
    labelNames: ['from', 'transcript'] as const,
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics?: boolean } = {}) {
    // prom-client calls collect() with `this` bound to the gauge, so the metrics are reached by closure.
    const inputTotals = this.inputTotals;
    const openCounts = () => this.openCounts();
    new Gauge({
      name: METRIC.cacheHitRatio,
      help: 'Share of input tokens read from the prompt cache since the process started, by purpose: cache_read / (uncached + cache_write + cache_read).',
      labelNames: ['purpose'] as const,
      registers: [this.registry],
      collect() {
        for (const [purpose, t] of inputTotals) {
          const all = t.uncached + t.cache_write + t.cache_read;
          this.set({ purpose }, all === 0 ? 0 : t.cache_read / all);
        }
      },
    });
    new Gauge({
      name: METRIC.approvalsWaiting,
      help: 'Investigations on this task queue waiting for a refund approval (cluster-wide, from Temporal visibility; every replica reports the same value, so aggregate with max).',
      registers: [this.registry],
      async collect() {
        const counts = await openCounts();
        if (counts) this.set(counts.awaiting_approval);
      },
    });
    new Gauge({
      name: METRIC.investigationsOpen,
      help: 'Running investigations on this task queue by case status (cluster-wide, from Temporal visibility; aggregate with max).',
      labelNames: ['status'] as const,
      registers: [this.registry],
      async collect() {
        const counts = await openCounts();
        if (!counts) return;
        for (const status of OPEN_STATUSES) this.set({ status }, counts[status]);
      },
    });
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** Records one model call attempt; `usage` is there when the call answered. */
  recordModelCall(purpose: ModelPurpose, outcome: ModelOutcome, seconds: number, usage?: TokenUsage): void {
    this.modelCalls.inc({ purpose, outcome });
    this.modelCallSeconds.observe({ purpose }, seconds);
    if (!usage) return;
    const kinds: Record<InputTokenKind, number> = {
      uncached: usage.input_tokens,
      cache_write: usage.cache_creation_input_tokens,
      cache_read: usage.cache_read_input_tokens,
    };
    const totals = this.inputTotals.get(purpose) ?? { uncached: 0, cache_write: 0, cache_read: 0 };
    for (const kind of Object.keys(kinds) as InputTokenKind[]) {
      // inc(0) still creates the series, so every kind shows from the first call on.
      this.modelInputTokens.inc({ purpose, kind }, kinds[kind] || 0);
      totals[kind] += kinds[kind] || 0;
    }
    this.inputTotals.set(purpose, totals);
    this.modelOutputTokens.inc({ purpose }, usage.output_tokens || 0);
  }

  /** Records one tool activity attempt. */
  recordToolCall(tool: string, outcome: ToolOutcomeLabel, seconds: number): void {
    this.toolCalls.inc({ tool, outcome });
    this.toolCallSeconds.observe({ tool }, seconds);
    if (outcome === 'error') this.toolErrors.inc({ tool, kind: 'result' });
    if (outcome === 'failed') this.toolErrors.inc({ tool, kind: 'exception' });
  }

  /** Sets where the approvals and open-investigation gauges read their counts (a visibility query). */
  setOpenInvestigationSource(source: OpenInvestigationSource | undefined): void {
    this.openSource = source;
  }

  private async openCounts(): Promise<OpenInvestigationCounts | undefined> {
    if (!this.openSource) return undefined;
    try {
      return await this.openSource();
    } catch {
      this.visibilityErrors.inc();
      return undefined;
    }
  }
}

let shared: CaseworkMetrics | undefined;

/** The process-wide metrics every worker in this process records into. */
export function processMetrics(): CaseworkMetrics {
  shared ??= new CaseworkMetrics();
  return shared;
}
