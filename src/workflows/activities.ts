import { proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { InvestigationSettings } from '../schemas/investigation';

// Every activity the investigation calls, proxied with explicit timeouts and retries. An
// unreachable dependency (Postgres, the model, a desk) is waited out for the settings' outage
// budget — as long as an ordinary restart or failover takes — before a person is told; a
// killed worker's activity is retried within seconds (short start-to-close timeouts, and
// heartbeats on the long model calls).

/** The outage budget of runs started before it was a setting. */
export const DEFAULT_OUTAGE_BUDGET_MS = 10 * 60_000;

const waitOut = (settings: InvestigationSettings) => ({
  scheduleToCloseTimeout: settings.outageBudgetMs ?? DEFAULT_OUTAGE_BUDGET_MS,
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** The options of the model calls (investigation, compaction, bulk reading): they heartbeat while they wait. */
export function modelCallOptions(settings: InvestigationSettings): ActivityOptions {
  return { ...waitOut(settings), startToCloseTimeout: '3 minutes', heartbeatTimeout: '20 seconds' };
}

/** The options every tool activity runs with; a call adds its one-line summary for the UI. */
export function toolOptions(settings: InvestigationSettings): ActivityOptions {
  return { ...waitOut(settings), startToCloseTimeout: '30 seconds' };
}

/** The activities of one run, proxied with that run's budget. */
export function activitiesFor(settings: InvestigationSettings) {
  const { callModel, compactConversation, callModelOnPlan, compactFromLog } = proxyActivities<Activities>(modelCallOptions(settings));
  const tools = proxyActivities<Activities>(toolOptions(settings));
  const { loadMemory, recordCase, recordRefundDecision } = proxyActivities<Activities>({ ...waitOut(settings), startToCloseTimeout: '30 seconds' });
  // A desk call times out after CASEWORK_DESK_TIMEOUT_MS (10 s by default), well inside this; a 429's
  // Retry-After overrides the backoff (nextRetryDelay), and 401/403/404 fail at once (non-retryable).
  const { postToDesk } = proxyActivities<Activities>({ ...waitOut(settings), startToCloseTimeout: '45 seconds' });
  return {
    callModel,
    compactConversation,
    callModelOnPlan,
    compactFromLog,
    tools,
    loadMemory,
    recordCase,
    recordRefundDecision,
    postToDesk,
    toolOptions: toolOptions(settings),
    modelOptions: modelCallOptions(settings),
  };
}

/** The activities a run calls. */
export type RunActivities = ReturnType<typeof activitiesFor>;
