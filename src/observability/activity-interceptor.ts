import type { Context } from '@temporalio/activity';
import type { ActivityInterceptors, ActivityInterceptorsFactory } from '@temporalio/worker';
import { isToolName } from '../schemas/tool-specs';
import type { ToolOutcome } from '../schemas/tool-call';
import type { CaseworkMetrics } from './metrics';

// One interceptor for every activity: tool activities are counted and timed (calls, errors by
// tool), and every activity's log lines get the customer id the activity was called for. The
// activity context already adds workflowId, runId, activityType and attempt.

/** The customer (and ticket) an activity input is for, when it says: `customerId` or a tool call's `context`. */
export function inputLogAttributes(input: unknown): Record<string, string> {
  if (!input || typeof input !== 'object') return {};
  const record = input as Record<string, unknown>;
  const context = record.context && typeof record.context === 'object' ? (record.context as Record<string, unknown>) : {};
  const out: Record<string, string> = {};
  const customerId = record.customerId ?? context.customerId;
  const ticketId = record.ticketId ?? context.ticketId;
  if (typeof customerId === 'string') out.customerId = customerId;
  if (typeof ticketId === 'string') out.ticketId = ticketId;
  if (typeof context.toolUseId === 'string') out.toolUseId = context.toolUseId;
  return out;
}

function isToolOutcome(value: unknown): value is ToolOutcome {
  return !!value && typeof value === 'object' && typeof (value as ToolOutcome).is_error === 'boolean';
}

/** True for recordCase's answer when this attempt wrote the case (a retry finds it already there). */
function wroteCase(value: unknown): boolean {
  return !!value && typeof value === 'object' && (value as { written?: unknown }).written === true;
}

/** Times every activity attempt (casework_activity_duration_seconds) and counts each closed case once. */
async function timed(metrics: CaseworkMetrics, activity: string, run: () => Promise<unknown>): Promise<unknown> {
  const started = performance.now();
  try {
    const result = await run();
    metrics.recordActivity(activity, 'ok', (performance.now() - started) / 1000);
    if (activity === 'recordCase' && wroteCase(result)) metrics.casesRecorded.inc();
    return result;
  } catch (error) {
    metrics.recordActivity(activity, 'failed', (performance.now() - started) / 1000);
    throw error;
  }
}

/** The worker's activity interceptors: activity and tool metrics, and customer-scoped log attributes. */
export function activityInterceptors(metrics: CaseworkMetrics): ActivityInterceptorsFactory {
  return (ctx: Context): ActivityInterceptors => {
    let attributes: Record<string, string> = {};
    return {
      inbound: {
        async execute(input, next) {
          attributes = inputLogAttributes(input.args[0]);
          const tool = ctx.info.activityType;
          if (!isToolName(tool)) return timed(metrics, tool, () => next(input));
          const started = performance.now();
          const seconds = () => (performance.now() - started) / 1000;
          let result: unknown;
          try {
            result = await timed(metrics, tool, () => next(input));
          } catch (error) {
            // Temporal logs the failure itself ("Activity failed"); here it is only counted.
            metrics.recordToolCall(tool, 'failed', seconds());
            throw error;
          }
          const isError = isToolOutcome(result) && result.is_error;
          const elapsed = seconds();
          metrics.recordToolCall(tool, isError ? 'error' : 'ok', elapsed);
          // The result text can quote customer data, so only its size is logged.
          ctx.log.info('tool call', {
            tool,
            isError,
            resultChars: isToolOutcome(result) ? result.content.length : undefined,
            durationMs: Math.round(elapsed * 1000),
          });
          return result;
        },
      },
      outbound: {
        getLogAttributes(input, next) {
          // The task token is a long opaque blob useful only for async completion; it drowns the line.
          const { taskToken: _taskToken, ...rest } = input;
          return next({ ...rest, ...attributes });
        },
      },
    };
  };
}
