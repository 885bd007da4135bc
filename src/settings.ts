import type { Config } from './config';
import type { PriceTable } from './schemas/model';
import type { Approver, InvestigationSettings } from './schemas/investigation';
import { CLEAR_EVERY } from './context/clearing';

/** Parses "name:limitCents,name:limitCents" into approvers, naming the bad entry when malformed. */
export function parseApprovers(spec: string): Approver[] {
  return spec
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const [, name, limit] = /^([A-Za-z0-9_.@-]+):(\d+)$/.exec(entry) ?? [];
      if (name === undefined || limit === undefined) throw new Error(`CASEWORK_APPROVERS entry "${entry}" is not name:limitCents`);
      return { name, limit_cents: Number(limit) };
    });
}

/** The price table configured through CASEWORK_PRICE_* (see src/config.ts). */
export function pricesFromConfig(
  config: Pick<Config, 'CASEWORK_PRICE_INPUT_PER_MTOK' | 'CASEWORK_PRICE_OUTPUT_PER_MTOK' | 'CASEWORK_PRICE_CACHE_WRITE_MULTIPLIER' | 'CASEWORK_PRICE_CACHE_READ_MULTIPLIER'> &
    Partial<Pick<Config, 'CASEWORK_PRICE_CACHE_WRITE_1H_MULTIPLIER'>>,
): PriceTable {
  return {
    input_per_mtok: config.CASEWORK_PRICE_INPUT_PER_MTOK,
    output_per_mtok: config.CASEWORK_PRICE_OUTPUT_PER_MTOK,
    cache_write_multiplier: config.CASEWORK_PRICE_CACHE_WRITE_MULTIPLIER,
    cache_read_multiplier: config.CASEWORK_PRICE_CACHE_READ_MULTIPLIER,
    // Only when set, so a table without it means the API's 2x, as it did before.
    ...(config.CASEWORK_PRICE_CACHE_WRITE_1H_MULTIPLIER !== undefined ? { cache_write_1h_multiplier: config.CASEWORK_PRICE_CACHE_WRITE_1H_MULTIPLIER } : {}),
  };
}

const HOUR = 3_600_000;

/** True when CASEWORK_DESKS lists the generic outbound webhook. */
export function deskWebhookEnabled(desks: string): boolean {
  return desks
    .split(',')
    .map((s) => s.trim())
    .includes('webhook');
}

/** The settings a new investigation starts with, from configuration. */
export function investigationSettings(config: Config): InvestigationSettings {
  return {
    maxSteps: config.CASEWORK_MAX_STEPS,
    maxStepsPerRun: config.CASEWORK_MAX_STEPS_PER_RUN,
    clearEvery: config.CASEWORK_CLEAR_EVERY ?? CLEAR_EVERY,
    keepRecent: config.CASEWORK_KEEP_RECENT,
    cacheTtlMs: config.CASEWORK_CACHE_TTL_SECONDS * 1000,
    compactAboveTokens: config.CASEWORK_COMPACT_ABOVE_TOKENS,
    keepLastMessages: config.CASEWORK_KEEP_LAST_MESSAGES,
    followUpWindowMs: config.CASEWORK_FOLLOW_UP_WINDOW_SECONDS * 1000,
    approvalReminderMs: config.CASEWORK_APPROVAL_REMINDER_HOURS * HOUR,
    approvalTimeoutMs: config.CASEWORK_APPROVAL_TIMEOUT_HOURS * HOUR,
    outageBudgetMs: config.CASEWORK_OUTAGE_BUDGET_SECONDS * 1000,
    approvers: parseApprovers(config.CASEWORK_APPROVERS),
    maxTokens: config.CASEWORK_MAX_TOKENS,
    thinking: config.CASEWORK_THINKING === 'true',
    prices: pricesFromConfig(config),
    // Only when set, so the settings of runs without a generic webhook stay as they were.
    ...(deskWebhookEnabled(config.CASEWORK_DESKS) ? { deskWebhook: true } : {}),
    ...(config.CASEWORK_LOCAL_READ_TOOLS === 'false' ? { localReadTools: false } : {}),
    // A fixed batch interval, when configured, keeps the schedule it names; otherwise the cache-optimal one under the peak.
    ...(config.CASEWORK_CLEAR_EVERY === undefined && config.CASEWORK_CONTEXT_PEAK_TOKENS > 0
      ? { cacheSchedule: { peakTokens: config.CASEWORK_CONTEXT_PEAK_TOKENS, withinHourShare: config.CASEWORK_WAIT_WITHIN_HOUR_SHARE } }
      : {}),
    // Only when set, so the settings of runs without MCP servers stay as they were.
    ...(config.CASEWORK_MCP_SERVERS ? { mcpTools: true as const } : {}),
    // Every run keeps its transcript by reference; the flag stays so the release before this one, after a rollback, replays these runs as they ran.
    historyByReference: true,
    ...(config.CASEWORK_LOCAL_MODEL_CALLS === 'true' ? { localModelCalls: true } : {}),
  };
}

/**
 * The workflow task timeout an investigation starts with. A local model call keeps the step's
 * workflow task open, and the worker heartbeats that task at 80 % of its timeout; a status query
 * or a signal arriving mid-call is answered at the next heartbeat. Four seconds puts that
 * heartbeat (3.2 s) inside the 4 s a status read waits for a worker (QUERY_WAIT_MS); Temporal's
 * 10 s default would make the console's case page wait up to 8 s and then report no worker.
 * Undefined (the server's default) for remote model calls, where a call holds no task open.
 */
export function workflowTaskTimeoutFor(settings: Pick<InvestigationSettings, 'localModelCalls'>): '4 seconds' | undefined {
  return settings.localModelCalls ? '4 seconds' : undefined;
}
