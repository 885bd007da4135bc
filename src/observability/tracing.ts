import { context, propagation, trace, type Attributes, type Span, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Config } from '../config';

// One trace per customer message: the HTTP request, the ticket gate, signal-with-start, the
// workflow, every activity and the model call. Tracing is on only when OTEL_EXPORTER_OTLP_ENDPOINT
// is set (or a test passes its own exporter): off, no provider is registered, no interceptor is
// added and inSpan calls straight through, so it costs nothing. The OTLP exporter reads the
// other standard variables itself (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, OTEL_SERVICE_NAME…).
// Attributes carry ids, counts and names, never what a customer or the model wrote.

/** The tracer name casework's own spans are made with. */
export const TRACER_NAME = 'casework';

/** A running tracer provider, process-wide. */
export interface Tracing {
  resource: Resource;
  processor: SpanProcessor;
  tracer: Tracer;
  /** Flushes spans not yet exported. */
  flush(): Promise<void>;
  /** Flushes and stops the provider; tracing is off afterwards. */
  shutdown(): Promise<void>;
}

let active: Tracing | undefined;

/** The process's tracing, when it is on. */
export function currentTracing(): Tracing | undefined {
  return active;
}

/**
 * Starts tracing for this process once (later calls return the first one): with `exporter`
 * when given (a test's in-memory exporter, exported span by span), else over OTLP/HTTP to
 * OTEL_EXPORTER_OTLP_ENDPOINT in batches. Neither: undefined, and nothing is installed.
 */
export function startTracing(config: Pick<Config, 'OTEL_EXPORTER_OTLP_ENDPOINT'>, options: { serviceName: string; exporter?: SpanExporter }): Tracing | undefined {
  if (active) return active;
  if (!options.exporter && !config.OTEL_EXPORTER_OTLP_ENDPOINT) return undefined;
  const resource = new Resource({ [ATTR_SERVICE_NAME]: process.env.OTEL_SERVICE_NAME ?? options.serviceName });
  const processor = options.exporter
    ? new SimpleSpanProcessor(options.exporter)
    : new BatchSpanProcessor(new OTLPTraceExporter({ url: `${config.OTEL_EXPORTER_OTLP_ENDPOINT!.replace(/\/$/, '')}/v1/traces` }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  provider.register({ contextManager: new AsyncLocalStorageContextManager().enable(), propagator: new W3CTraceContextPropagator() });
  const tracing: Tracing = {
    resource,
    processor,
    tracer: provider.getTracer(TRACER_NAME),
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
      if (active === tracing) active = undefined;
    },
  };
  active = tracing;
  return tracing;
}

/**
 * Runs `fn` in a span named `name` (a child of the active span) when tracing is on (the
 * process's, or the `tracing` a component captured when it was made); straight through when it
 * is off. A thrown error marks the span as failed with the error's class only.
 */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span | undefined) => Promise<T>,
  options: { kind?: SpanKind; tracing?: Tracing | null } = {},
): Promise<T> {
  const tracing = options.tracing === undefined ? active : options.tracing;
  if (!tracing) return fn(undefined);
  const kind = options.kind ?? SpanKind.INTERNAL;
  return tracing.tracer.startActiveSpan(name, { attributes, kind }, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      // The class, not the message: messages can quote what a customer sent.
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).name });
      throw error;
    } finally {
      span.end();
    }
  });
}
