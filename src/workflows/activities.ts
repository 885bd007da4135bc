import { ApplicationFailure, proxyActivities, proxyLocalActivities, TimeoutFailure, type ActivityOptions, type LocalActivityOptions } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { InvestigationSettings } from '../schemas/investigation';

// Every activity the investigation calls, proxied with explicit timeouts and retries. An
// unreachable dependency (Postgres, the model, a desk) is waited out for the settings' outage
// budget — as long as an ordinary restart or failover takes — before a person is told; a
// killed worker's activity is retried within seconds (short start-to-close timeouts, and
// heartbeats on the long model calls).

/** How a local activity's last attempt rejects: with its own failure, not an ActivityFailure around it. */
export function isLocalActivityFailure(error: unknown): error is ApplicationFailure | TimeoutFailure {
  return error instanceof ApplicationFailure || error instanceof TimeoutFailure;
}

/** The outage budget of runs started before it was a setting. */
export const DEFAULT_OUTAGE_BUDGET_MS = 10 * 60_000;

/**
 * How long a case waits before trying again a write that failed past the outage budget (a
 * refund decision, the case record): the budget itself, at most a minute, so a case handed
 * over only because Postgres was away carries on soon after it is back.
 */
export function writeRetryMs(settings: InvestigationSettings): number {
  return Math.min(settings.outageBudgetMs ?? DEFAULT_OUTAGE_BUDGET_MS, 60_000);
}

/** The retry backoff of every activity: 1 s, doubling, at most 30 s. */
const BACKOFF = { initialMs: 1_000, coefficient: 2, maximumMs: 30_000 };

const waitOut = (settings: InvestigationSettings) => ({
  scheduleToCloseTimeout: settings.outageBudgetMs ?? DEFAULT_OUTAGE_BUDGET_MS,
  retry: { initialInterval: `${BACKOFF.initialMs} ms`, backoffCoefficient: BACKOFF.coefficient, maximumInterval: `${BACKOFF.maximumMs} ms` },
});

/**
 * How many attempts fit in `budgetMs` of backoff: the first at once, each next one after the
 * backoff, as long as the waits so far stay within the budget. The server ends a remote
 * activity's retries at its schedule-to-close timeout; the worker does not end a local
 * activity's retries there (it starts another attempt past it), so local ones are capped by
 * count to give up where a remote one would.
 */
export function attemptsWithin(budgetMs: number): number {
  let attempts = 1;
  let waited = 0;
  for (let wait = BACKOFF.initialMs; waited + wait <= budgetMs; wait = Math.min(wait * BACKOFF.coefficient, BACKOFF.maximumMs)) {
    waited += wait;
    attempts += 1;
  }
  return attempts;
}

/** The options of the model calls (investigation, compaction, bulk reading): they heartbeat while they wait. */
export function modelCallOptions(settings: InvestigationSettings): ActivityOptions {
  return { ...waitOut(settings), startToCloseTimeout: '3 minutes', heartbeatTimeout: '20 seconds' };
}

/** The options every tool activity runs with; a call adds its one-line summary for the UI. */
export function toolOptions(settings: InvestigationSettings): ActivityOptions {
  return { ...waitOut(settings), startToCloseTimeout: '30 seconds' };
}

/**
 * The options of the read-only tools run as local activities (tool-dispatch.ts): the same
 * outage budget, backoff and per-attempt timeout as a remote tool, and as many attempts as
 * that backoff fits in the budget (attemptsWithin). The worker retries within the workflow
 * task for up to a minute (the SDK's localRetryThreshold), then waits out longer backoffs on a
 * timer, so an unreachable Postgres is waited out for the budget, and no longer, before the
 * tool counts as unavailable and a person is told.
 */
export function localToolOptions(settings: InvestigationSettings): LocalActivityOptions {
  const options = waitOut(settings);
  return { ...options, retry: { ...options.retry, maximumAttempts: attemptsWithin(options.scheduleToCloseTimeout) }, startToCloseTimeout: '30 seconds' };
}

/**
 * The options of the model calls run as local activities (settings.localModelCalls): the same
 * per-attempt timeout as a remote call and as many attempts as the backoff fits in the outage
 * budget. A local activity cannot heartbeat: a call longer than the workflow task's timeout
 * keeps the task open by the worker heartbeating the task itself, and a worker that dies
 * mid-call is noticed when that task times out; the call is then made again on another
 * worker, which finds the reply the first attempt kept (model_replies) instead of paying twice.
 */
export function localModelCallOptions(settings: InvestigationSettings): LocalActivityOptions {
  return { ...localToolOptions(settings), startToCloseTimeout: '3 minutes' };
}

/** The step and compaction calls of a run: remote activities, or local ones when the run's settings say so (decided at start). */
function planCalls(settings: InvestigationSettings): Pick<Activities, 'callModelOnPlan' | 'compactFromLog'> {
  if (settings.localModelCalls) return proxyLocalActivities<Activities>(localModelCallOptions(settings));
  return proxyActivities<Activities>(modelCallOptions(settings));
}

/** The activities of one run, proxied with that run's budget. */
export function activitiesFor(settings: InvestigationSettings) {
  const { callModelOnPlan, compactFromLog } = planCalls(settings);
  const tools = proxyActivities<Activities>(toolOptions(settings));
  const localTools = proxyLocalActivities<Activities>(localToolOptions(settings));
  // A read of the transcript log answering in milliseconds, like the read-only tools: one marker event, no task of its own.
  const { toolEvidenceFromLog } = proxyLocalActivities<Activities>(localToolOptions(settings));
  const { loadMemory, recordCase, recordRefundDecision } = proxyActivities<Activities>({ ...waitOut(settings), startToCloseTimeout: '30 seconds' });
  // A desk call times out after CASEWORK_DESK_TIMEOUT_MS (10 s by default), well inside this; a 429's
  // Retry-After overrides the backoff (nextRetryDelay), and 401/403/404 fail at once (non-retryable).
  const { postToDesk } = proxyActivities<Activities>({ ...waitOut(settings), startToCloseTimeout: '45 seconds' });
  return {
    callModelOnPlan,
    compactFromLog,
    tools,
    localTools,
    toolEvidenceFromLog,
    loadMemory,
    recordCase,
    recordRefundDecision,
    postToDesk,
    toolOptions: toolOptions(settings),
    localToolOptions: localToolOptions(settings),
    modelOptions: modelCallOptions(settings),
  };
}

/** The activities a run calls. */
export type RunActivities = ReturnType<typeof activitiesFor>;
