import type { Config } from './config';
import { pricesFromConfig } from './workflows/accounting';
import type { Approver, InvestigationSettings } from './schemas/investigation';

/** Parses "name:limitCents,name:limitCents" into approvers, naming the bad entry when malformed. */
export function parseApprovers(spec: string): Approver[] {
  return spec
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const match = /^([A-Za-z0-9_.@-]+):(\d+)$/.exec(entry);
      if (!match) throw new Error(`CASEWORK_APPROVERS entry "${entry}" is not name:limitCents`);
      return { name: match[1], limit_cents: Number(match[2]) };
    });
}

const HOUR = 3_600_000;

/** The settings a new investigation starts with, from configuration. */
export function investigationSettings(config: Config): InvestigationSettings {
  return {
    maxSteps: config.CASEWORK_MAX_STEPS,
    maxStepsPerRun: config.CASEWORK_MAX_STEPS_PER_RUN,
    clearEvery: config.CASEWORK_CLEAR_EVERY,
    keepRecent: config.CASEWORK_KEEP_RECENT,
    cacheTtlMs: config.CASEWORK_CACHE_TTL_SECONDS * 1000,
    compactAboveTokens: config.CASEWORK_COMPACT_ABOVE_TOKENS,
    keepLastMessages: config.CASEWORK_KEEP_LAST_MESSAGES,
    followUpWindowMs: config.CASEWORK_FOLLOW_UP_WINDOW_SECONDS * 1000,
    approvalReminderMs: config.CASEWORK_APPROVAL_REMINDER_HOURS * HOUR,
    approvalTimeoutMs: config.CASEWORK_APPROVAL_TIMEOUT_HOURS * HOUR,
    approvers: parseApprovers(config.CASEWORK_APPROVERS),
    maxTokens: config.CASEWORK_MAX_TOKENS,
    thinking: config.CASEWORK_THINKING === 'true',
    prices: pricesFromConfig(config),
  };
}
