import { context as otelContext, trace, type Context } from '@opentelemetry/api';
import type { WorkflowInboundCallsInterceptor, WorkflowInterceptors, WorkflowInternalsInterceptor, WorkflowOutboundCallsInterceptor } from '@temporalio/workflow';

// Bundled into the workflow code (a workflow interceptor module): Temporal's OpenTelemetry
// workflow interceptors, for a run whose start carried a trace context (the client traced the
// signal-with-start). A run started without one (tracing off, or a run older than tracing)
// passes straight through: no span, no extra yield, the very commands it had before, so
// recorded histories replay as they were and tracing off costs nothing here.
// Spans leave the sandbox through the `exporter` sink the worker registers (worker-tracing.ts).
//
// One trace per customer message: a run lives through many messages, but the SDK schedules every
// activity under the context active in the workflow, which is the run's first (RunWorkflow, in
// the first message's trace). So each ticket event the run receives (a customer's message, the
// ticket closing) becomes the context activities are scheduled under from then on: the model
// calls, tools and desk posts a follow-up causes are children of that follow-up's HandleSignal
// span, in the trace its webhook or event request began. Only span parents change (activity
// headers), never a command, and the context is rebuilt the same way when a history is replayed.

// eslint-disable-next-line @typescript-eslint/consistent-type-imports -- the module's type, without loading it
type OtelWorkflow = typeof import('@temporalio/interceptors-opentelemetry/lib/workflow');

/** The header Temporal's OpenTelemetry interceptors carry the trace context in. */
export const TRACE_HEADER = '_tracer-data';

/** The signals that carry a ticket event: each starts a turn whose activities belong to its trace. */
export const MESSAGE_SIGNALS: ReadonlySet<string> = new Set(['customerMessage', 'closeTicket']);

/** The workflow interceptors the worker registers beside the logging ones. */
export const interceptors = (): WorkflowInterceptors => {
  let traced = false;
  /** The context of the latest ticket event's HandleSignal span, once one arrived traced. */
  let turn: Context | undefined;
  let otel:
    | {
        inbound: InstanceType<OtelWorkflow['OpenTelemetryInboundInterceptor']>;
        outbound: InstanceType<OtelWorkflow['OpenTelemetryOutboundInterceptor']>;
        internals: InstanceType<OtelWorkflow['OpenTelemetryInternalsInterceptor']>;
      }
    | undefined;
  // Loaded and built on first use only: OpenTelemetry's modules (about a third of the bundle) and
  // the tracer provider inside the sandbox are not free, and every run (and every replay) would
  // evaluate them again.
  const use = () => {
    if (otel) return otel;
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for a traced run
    const sdk = require('@temporalio/interceptors-opentelemetry/lib/workflow') as OtelWorkflow;
    return (otel = {
      inbound: new sdk.OpenTelemetryInboundInterceptor(),
      outbound: new sdk.OpenTelemetryOutboundInterceptor(),
      internals: new sdk.OpenTelemetryInternalsInterceptor(),
    });
  };
  const inbound: WorkflowInboundCallsInterceptor = {
    execute(input, next) {
      traced = TRACE_HEADER in input.headers;
      return traced ? use().inbound.execute(input, next) : next(input);
    },
    handleSignal(input, next) {
      if (!traced || !(TRACE_HEADER in input.headers)) return next(input);
      return use().inbound.handleSignal(input, (signal) => {
        // Inside the SDK's HandleSignal span (absent for histories older than signal tracing).
        const active = otelContext.active();
        if (MESSAGE_SIGNALS.has(signal.signalName) && trace.getSpan(active)) turn = active;
        return next(signal);
      });
    },
  };
  const outbound: WorkflowOutboundCallsInterceptor = {
    scheduleActivity(input, next) {
      if (!traced) return next(input);
      return turn ? otelContext.with(turn, () => use().outbound.scheduleActivity(input, next)) : use().outbound.scheduleActivity(input, next);
    },
    scheduleLocalActivity(input, next) {
      if (!traced) return next(input);
      return turn ? otelContext.with(turn, () => use().outbound.scheduleLocalActivity(input, next)) : use().outbound.scheduleLocalActivity(input, next);
    },
    continueAsNew(input, next) {
      return traced ? use().outbound.continueAsNew(input, next) : next(input);
    },
    getLogAttributes(input, next) {
      return traced ? use().outbound.getLogAttributes(input, next) : next(input);
    },
  };
  const internals: WorkflowInternalsInterceptor = {
    dispose(input, next) {
      // The SDK's dispose is async only in its signature: it disables the context manager and calls next at once.
      if (otel) void otel.internals.dispose(input, next);
      else next(input);
    },
  };
  return { inbound: [inbound], outbound: [outbound], internals: [internals] };
};
