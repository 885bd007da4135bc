import type { IncomingMessage, ServerResponse } from 'node:http';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { currentTracing } from './tracing';

// The root of a customer message's trace: one server span per HTTP request, continuing a
// caller's W3C traceparent when it sends one. The span carries the method, the route's path and
// the status, never the body, the query string or a header value.

/** Route words always followed by an id, whatever the id looks like. */
const ID_AFTER = new Set(['investigations', 'customers', 'cases', 'requests', 'tickets']);

/**
 * The path with its ids folded, so span names stay few and carry no customer's or ticket's id:
 * /investigations/{id}, /memory/{id}; route words (/webhooks/zendesk, /console/sign-in) stay.
 */
export function routeOf(path: string): string {
  const parts = path.split('/');
  return parts.map((part, i) => (i >= 2 && (ID_AFTER.has(parts[i - 1]!) || /[\d_%.:@]/.test(part)) ? '{id}' : part)).join('/');
}

/** Runs `handle` inside a server span for `req` when tracing is on; straight through when it is off. */
export async function traceRequest(req: IncomingMessage, res: ServerResponse, handle: () => Promise<void>): Promise<void> {
  const tracing = currentTracing();
  if (!tracing) return handle();
  const parent = propagation.extract(context.active(), req.headers);
  const method = req.method ?? 'GET';
  const route = routeOf(new URL(req.url ?? '/', 'http://localhost').pathname);
  const span = tracing.tracer.startSpan(`${method} ${route}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'http.route': route } }, parent);
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  };
  // finish: the answer was sent; close without it: the caller went away first.
  res.once('finish', end);
  res.once('close', end);
  return context.with(trace.setSpan(parent, span), handle);
}
