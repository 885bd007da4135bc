import type { WorkflowInboundCallsInterceptor, WorkflowInterceptors, WorkflowInternalsInterceptor, WorkflowOutboundCallsInterceptor } from '@temporalio/workflow';

// Bundled into the workflow code (a workflow interceptor module): Temporal's OpenTelemetry
// workflow interceptors, for a run whose start carried a trace context (the client traced the
// signal-with-start). A run started without one (tracing off, or a run older than tracing)
// passes straight through: no span, no extra yield, the very commands it had before, so
// recorded histories replay as they were and tracing off costs nothing here.
// Spans leave the sandbox through the `exporter` sink the worker registers (worker-tracing.ts).

// eslint-disable-next-line @typescript-eslint/consistent-type-imports -- the module's type, without loading it
type OtelWorkflow = typeof import('@temporalio/interceptors-opentelemetry/lib/workflow');

/** The header Temporal's OpenTelemetry interceptors carry the trace context in. */
export const TRACE_HEADER = '_tracer-data';

/** The workflow interceptors the worker registers beside the logging ones. */
export const interceptors = (): WorkflowInterceptors => {
  let traced = false;
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
      return traced && TRACE_HEADER in input.headers ? use().inbound.handleSignal(input, next) : next(input);
    },
  };
  const outbound: WorkflowOutboundCallsInterceptor = {
    scheduleActivity(input, next) {
      return traced ? use().outbound.scheduleActivity(input, next) : next(input);
    },
    scheduleLocalActivity(input, next) {
      return traced ? use().outbound.scheduleLocalActivity(input, next) : next(input);
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
