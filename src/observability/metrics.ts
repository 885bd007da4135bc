import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { createDeskMetrics, type DeskMetrics } from '../desk/metrics';
import { costOf } from '../context/accounting';
import type { ModelPurpose, PriceTable, TokenUsage } from '../schemas/model';

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
  needs_human: number;
}

/** The case statuses the open-investigation gauge reports, one label value each. */
const OPEN_STATUSES = ['investigating', 'awaiting_approval', 'waiting_for_customer', 'needs_human'] as const satisfies readonly (keyof OpenInvestigationCounts)[];

/** Where the open-investigation gauges read from; set by startMetricsEndpoint. */
export type OpenInvestigationSource = () => Promise<OpenInvestigationCounts>;

/** Refund requests still waiting for a person, from the refund trail in Postgres. */
export interface ApprovalAges {
  waiting: number;
  /** Seconds the oldest waiting request has waited; 0 when none waits. */
  oldestSeconds: number;
  /** Requests waiting longer than the reminder delay: a reminder went out and nobody acted. */
  pastReminder: number;
}

/** Where the approval-age gauges read from; set by startMetricsEndpoint. */
export type ApprovalAgeSource = () => Promise<ApprovalAges>;

/** Whether a dependency answered its last probe. */
export type DependencyProbe = () => Promise<boolean>;

/** The dependencies casework_dependency_up reports, one label value each. */
export const DEPENDENCIES = ['postgres', 'temporal'] as const;

/** One of DEPENDENCIES. */
export type Dependency = (typeof DEPENDENCIES)[number];

/** The settings an operator compares the approval and cost gauges against; exported as gauges so alert rules need no copy of them. */
export interface OperatorLimits {
  approvalReminderSeconds: number;
  approvalAutoDenySeconds: number;
  caseBudgetUsd: number;
}

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
  modelCost: 'casework_model_cost_usd_total',
  activitySeconds: 'casework_activity_duration_seconds',
  casesRecorded: 'casework_cases_recorded_total',
  approvalOldestWait: 'casework_approval_oldest_wait_seconds',
  approvalsPastReminder: 'casework_approvals_past_reminder',
  approvalReminder: 'casework_approval_reminder_seconds',
  approvalAutoDeny: 'casework_approval_auto_deny_seconds',
  caseBudget: 'casework_case_budget_usd',
  approvalCountErrors: 'casework_approval_count_errors_total',
  dependencyUp: 'casework_dependency_up',
  workerPolling: 'casework_worker_polling',
  retentionRows: 'casework_retention_rows_removed_total',
  retentionSeconds: 'casework_retention_duration_seconds',
} as const;

/** casework's metrics and the registry they are exported from. */
export class CaseworkMetrics {
  readonly registry = new Registry();
  private readonly inputTotals = new Map<string, Record<InputTokenKind, number>>();
  private openSource: OpenInvestigationSource | undefined;
  private approvalSource: ApprovalAgeSource | undefined;
  private probes: Partial<Record<Dependency, DependencyProbe>> = {};
  private polling: (() => boolean) | undefined;
  private prices: PriceTable | undefined;
  private limitGauges: Record<keyof OperatorLimits, Gauge> | undefined;

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

  readonly modelCost = new Counter({
    name: METRIC.modelCost,
    help: 'What model calls cost in US dollars at the configured prices (CASEWORK_PRICE_*), by purpose; divided by casework_cases_recorded_total it is the cost per case.',
    labelNames: ['purpose'] as const,
    registers: [this.registry],
  });

  readonly activitySeconds = new Histogram({
    name: METRIC.activitySeconds,
    help: 'Duration of every activity attempt in seconds, by activity type and outcome (ok, failed): loadMemory is the recall at the start of a turn, callModelOnPlan the model step.',
    labelNames: ['activity', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });

  readonly casesRecorded = new Counter({
    name: METRIC.casesRecorded,
    help: "Closed cases written to the customer's memory (recordCase), once per case: a retry that finds the record already there is not counted.",
    registers: [this.registry],
  });

  readonly retentionRows = new Counter({
    name: METRIC.retentionRows,
    help: 'Rows retention deleted, by store (transcript_log, model_replies, customer_payloads, payload_blobs, memory_cases).',
    labelNames: ['store'] as const,
    registers: [this.registry],
  });

  readonly retentionSeconds = new Histogram({
    name: METRIC.retentionSeconds,
    help: 'Time one retention run took to empty a store (stores emptied together report the same time).',
    labelNames: ['store'] as const,
    buckets: [0.01, 0.1, 1, 10, 60, 600, 3600],
    registers: [this.registry],
  });

  readonly approvalCountErrors = new Counter({
    name: METRIC.approvalCountErrors,
    help: 'Failed reads of the refund trail behind the approval-age gauges (the gauges then keep their last value).',
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
    const approvalAges = () => this.approvalAges();
    new Gauge({
      name: METRIC.approvalOldestWait,
      help: 'Seconds the oldest refund request still waiting for a person has waited (cluster-wide, from Postgres; aggregate with max). Compare with casework_approval_auto_deny_seconds.',
      registers: [this.registry],
      async collect() {
        const ages = await approvalAges();
        if (ages) this.set(ages.oldestSeconds);
      },
    });
    new Gauge({
      name: METRIC.approvalsPastReminder,
      help: 'Refund requests waiting longer than the reminder delay: the reminder went out and nobody has approved or denied (cluster-wide, from Postgres; aggregate with max).',
      registers: [this.registry],
      async collect() {
        const ages = await approvalAges();
        if (ages) this.set(ages.pastReminder);
      },
    });
    const probes = this.probes;
    new Gauge({
      name: METRIC.dependencyUp,
      help: 'Whether this process reached a dependency at the last scrape (1) or not (0), by dependency: postgres, temporal.',
      labelNames: ['dependency'] as const,
      registers: [this.registry],
      async collect() {
        await Promise.all(
          DEPENDENCIES.map(async (dependency) => {
            const probe = probes[dependency];
            if (probe) this.set({ dependency }, (await probe().catch(() => false)) ? 1 : 0);
          }),
        );
      },
    });
    const polling = () => this.polling?.();
    new Gauge({
      name: METRIC.workerPolling,
      help: "1 while this process's worker is RUNNING (polling its task queue), 0 otherwise.",
      registers: [this.registry],
      collect() {
        const running = polling();
        if (running !== undefined) this.set(running ? 1 : 0);
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
    if (this.prices) this.modelCost.inc({ purpose }, costOf(usage, this.prices));
  }

  /** Sets the price table model calls are costed at (casework_model_cost_usd_total); unset, cost is not counted. */
  setPrices(prices: PriceTable | undefined): void {
    this.prices = prices;
  }

  /**
   * Exports the operator's limits as gauges (only in a process that sets them, the worker, so
   * a process without them shows no series rather than a misleading 0).
   */
  setLimits(limits: OperatorLimits): void {
    const gauge = (name: string, help: string) => new Gauge({ name, help, registers: [this.registry] });
    this.limitGauges ??= {
      approvalReminderSeconds: gauge(METRIC.approvalReminder, 'CASEWORK_APPROVAL_REMINDER_HOURS in seconds: when a waiting refund request gets its reminder.'),
      approvalAutoDenySeconds: gauge(METRIC.approvalAutoDeny, 'CASEWORK_APPROVAL_TIMEOUT_HOURS in seconds: when a waiting refund request is denied automatically.'),
      caseBudgetUsd: gauge(METRIC.caseBudget, 'CASEWORK_CASE_BUDGET_USD: the model cost per case an operator expects to stay under (the cost-per-case alert compares with it).'),
    };
    for (const key of Object.keys(this.limitGauges) as (keyof OperatorLimits)[]) this.limitGauges[key].set(limits[key]);
  }

  /** Records one activity attempt of any type. */
  recordActivity(activity: string, outcome: 'ok' | 'failed', seconds: number): void {
    this.activitySeconds.observe({ activity, outcome }, seconds);
  }

  /** Sets where the approval-age gauges read from (the refund trail). */
  setApprovalAgeSource(source: ApprovalAgeSource | undefined): void {
    this.approvalSource = source;
  }

  /** Sets the probe behind casework_dependency_up for one dependency. */
  setDependencyProbe(dependency: Dependency, probe: DependencyProbe | undefined): void {
    if (probe) this.probes[dependency] = probe;
    else delete this.probes[dependency];
  }

  /** Sets what casework_worker_polling reads (the worker's state). */
  setPollingCheck(check: (() => boolean) | undefined): void {
    this.polling = check;
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

  private async approvalAges(): Promise<ApprovalAges | undefined> {
    if (!this.approvalSource) return undefined;
    try {
      return await this.approvalSource();
    } catch {
      this.approvalCountErrors.inc();
      return undefined;
    }
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
