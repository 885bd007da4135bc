import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

// Every activity the investigation calls, proxied once with explicit timeouts and retries.

/** The model call: slow, and retried on the errors the model adapter marks retryable. */
export const { callModel } = proxyActivities<Activities>({
  startToCloseTimeout: '3 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
});

/** Compaction: one summarising model call. */
export const { compactConversation } = proxyActivities<Activities>({
  startToCloseTimeout: '3 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5 },
});

/** The options every tool activity runs with; a call adds its one-line summary for the UI. */
export const TOOL_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
} as const;

/** The tool activities, keyed by tool name. */
export const tools = proxyActivities<Activities>(TOOL_ACTIVITY_OPTIONS);

/** Memory and the refund trail's bookkeeping. */
export const { loadMemory, recordCase, recordRefundDecision } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
});
