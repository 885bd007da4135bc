import { trace } from '@opentelemetry/api';
import type { ClientInterceptors } from '@temporalio/client';
import { makeWorkflowExporter, OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor } from '@temporalio/interceptors-opentelemetry/lib/worker';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { OpenTelemetryWorkflowExporter } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions';
import type { Tracing } from './tracing';

// The worker's and the client's side of tracing across Temporal: the client puts the trace
// context in the headers of signal-with-start, the workflow (workflow-tracing.ts) carries it to
// each activity it schedules, and each activity runs in a span under it. Workflow spans are
// made in the sandbox and handed out through the `exporter` sink, which Temporal does not
// call during replay, so a replayed workflow task adds no span twice.

/** Workflow sinks: the span exporter when tracing is on, a no-op otherwise (a traced run on an untraced worker logs no warnings). */
export function tracingSinks(tracing: Tracing | undefined): InjectedSinks<{ exporter: OpenTelemetryWorkflowExporter }> {
  if (!tracing) return { exporter: { export: { fn: () => undefined } } };
  const inner = makeWorkflowExporter(tracing.processor, tracing.resource);
  return {
    exporter: {
      export: {
        // The SDK would copy the whole WorkflowInfo onto every span (memo, search attributes):
        // only the run's identity goes, never anything a customer wrote.
        fn: (info, spans) => inner.export.fn({ workflowId: info.workflowId, runId: info.runId, workflowType: info.workflowType, taskQueue: info.taskQueue } as typeof info, spans),
      },
    },
  };
}

/** Activity interceptors when tracing is on: each attempt in a span under the workflow's, marked with its attempt number. */
export function tracingActivityInterceptors(tracing: Tracing | undefined): ActivityInterceptorsFactory[] {
  if (!tracing) return [];
  return [
    (ctx) => ({
      inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer: tracing.tracer }),
      outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
    }),
    (ctx) => ({
      inbound: {
        execute(input, next) {
          // A retried attempt shows as such in the trace.
          trace.getActiveSpan()?.setAttributes({ 'temporal.activity.type': ctx.info.activityType, 'temporal.activity.attempt': ctx.info.attempt });
          return next(input);
        },
      },
    }),
  ];
}

/** Client interceptors when tracing is on: signal-with-start, signals and updates carry the trace context. */
export function tracingClientInterceptors(tracing: Tracing | undefined): ClientInterceptors | undefined {
  return tracing ? { workflow: [new OpenTelemetryWorkflowClientInterceptor({ tracer: tracing.tracer })] } : undefined;
}
