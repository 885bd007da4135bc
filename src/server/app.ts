import type { IncomingMessage, ServerResponse } from 'node:http';
import { mayReadAll, type Authenticator } from './auth';
import { createRouteContext, type AppDeps, type RouteContext, type Trace } from './context';
import { CONSOLE_PREFIX, consoleRoute, openConsole } from './console/routes';
import { errorAnswer, HttpError, sendHtml, sendJson, type Answer } from './http';
import { webhookRouteDesk } from '../desk/route';
import { deskSettings } from '../desk/settings';
import { postEvent } from './routes/events';
import { sendMetrics } from './routes/metrics';
import { createWebhookHandler, type WebhookHandler } from './routes/webhooks';
import { createPaymentWebhookHandler } from './routes/payment-webhooks';
import { selectPayments } from '../commerce/select';
import { liveness, readiness } from './routes/health';
import { decide, getInvestigation, workflowIdOf } from './routes/investigations';
import { CUSTOMER_ROUTE, customerRoute } from './routes/customers';
import { MEMORY_ROUTE, memoryRoute } from './routes/memory';

export { RETRY_AFTER_SECONDS, type AppDeps, type RequestLog } from './context';

// The HTTP server's request handling, free of sockets and process state so tests drive it with
// injected dependencies. Routes:
//   POST /events                               a ticket event -> 202 {workflowId, eventId}
//   GET  /investigations/:id                   the status query's answer
//   POST /investigations/:id/approve | /deny   {requestId, approver?, reason?} via the validated update
//   GET|PATCH|DELETE /customers/:id/memory…    the memory routes (routes/memory.ts)
//   GET  /healthz                              liveness: 200 while the process answers (no credentials needed)
//   GET  /readyz                               readiness: 200 when Temporal, Postgres and the keys are there, else 503 naming what is missing
//   POST /webhooks/{zendesk|intercom|freshdesk} a desk's signed webhook -> 202 (routes/webhooks.ts; the signature is the credential)
//   POST /webhooks/payments/{provider} the payment provider's signed webhook -> 200 (routes/payment-webhooks.ts)
//   GET  /metrics                              Prometheus text (a key that may read every customer's cases)
//   GET|POST /console…                         the support team's pages (console/routes.ts), HTML
// Every request gets exactly one answer: each route returns one, and every error becomes one.
// `casework console` (deps.routes = 'console') serves only the console, / (a redirect to it), /healthz and /readyz.

/** The request handler and the authenticator it uses. */
export interface App {
  auth: Authenticator;
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

const INVESTIGATION_ROUTE = /^\/investigations\/([^/]+)(?:\/(approve|deny))?$/;

function onlyMethod(method: string, allowed: string, path: string): void {
  if (method !== allowed) throw new HttpError(405, `${method} is not allowed on ${path}; use ${allowed}`, { allow: allowed });
}

const WEBHOOK_PATH = /^\/webhooks\/(zendesk|intercom|freshdesk)$/;
const PAYMENT_WEBHOOK_PATH = /^\/webhooks\/payments\/([a-z0-9_-]{1,40})$/;

/** Answers one POST /webhooks/payments/{provider}. */
type PaymentWebhookHandler = ReturnType<typeof createPaymentWebhookHandler>;

/** Finds the route for a path and runs it; undefined when the route wrote its own answer. */
async function route(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  trace: Trace,
  webhooks: WebhookHandler,
  paymentWebhooks: PaymentWebhookHandler,
): Promise<Answer | undefined> {
  const method = req.method ?? 'GET';
  const payment = PAYMENT_WEBHOOK_PATH.exec(path);
  if (payment) {
    onlyMethod(method, 'POST', path);
    return paymentWebhooks(payment[1]!, req, trace);
  }
  if (WEBHOOK_PATH.test(path)) {
    onlyMethod(method, 'POST', path);
    const desk = webhookRouteDesk(method, path);
    if (desk) await webhooks(desk, req, res, trace);
    return undefined;
  }
  if (path === '/metrics') {
    onlyMethod(method, 'GET', path);
    const principal = ctx.principalOf(req, trace);
    if (!mayReadAll(principal)) throw new HttpError(403, 'these credentials may not read metrics; use an operator key');
    await sendMetrics(res);
    return undefined;
  }
  if (path === '/healthz') {
    onlyMethod(method, 'GET', path);
    return liveness(ctx);
  }
  if (path === '/readyz') {
    onlyMethod(method, 'GET', path);
    return readiness(ctx);
  }
  if (path === '/events') {
    onlyMethod(method, 'POST', path);
    return postEvent(ctx, req, trace);
  }
  const investigation = INVESTIGATION_ROUTE.exec(path);
  if (investigation) {
    const [, segment = '', action] = investigation;
    onlyMethod(method, action ? 'POST' : 'GET', path);
    const principal = ctx.principalOf(req, trace);
    const workflowId = workflowIdOf(segment, trace);
    if (!action) return getInvestigation(ctx, principal, workflowId, trace);
    return decide(ctx, req, principal, workflowId, action === 'approve' ? 'approved' : 'denied');
  }
  if (path === CONSOLE_PREFIX || path.startsWith(`${CONSOLE_PREFIX}/`)) return consoleRoute(ctx, req, path, trace);
  const memory = MEMORY_ROUTE.exec(path);
  if (memory) return memoryRoute(ctx, req, memory, trace);
  const customer = CUSTOMER_ROUTE.exec(path);
  if (customer) return customerRoute(ctx, req, customer, trace);
  throw new HttpError(404, `no route ${method} ${path.slice(0, 200)}; see GET /readyz, POST /events, GET /investigations/:id`);
}

/** The routes of `casework console`: the console's pages, /healthz and /readyz, nothing that takes events or JSON. */
async function consoleOnlyRoute(ctx: RouteContext, req: IncomingMessage, path: string, trace: Trace): Promise<Answer> {
  const method = req.method ?? 'GET';
  if (path === '/') {
    onlyMethod(method, 'GET', path);
    return { status: 303, body: null, html: '', headers: { location: CONSOLE_PREFIX } };
  }
  if (path === '/healthz') {
    onlyMethod(method, 'GET', path);
    return liveness(ctx);
  }
  if (path === '/readyz') {
    onlyMethod(method, 'GET', path);
    return readiness(ctx);
  }
  if (path === CONSOLE_PREFIX || path.startsWith(`${CONSOLE_PREFIX}/`)) return consoleRoute(ctx, req, path, trace);
  throw new HttpError(404, `no route ${method} ${path.slice(0, 200)}: this is the support console (${CONSOLE_PREFIX}); the JSON API is \`casework serve\``);
}

/** Builds the request handler. Throws when the endpoint is not configured safely (no keys, not open mode). */
export function createApp(deps: AppDeps): App {
  const ctx = createRouteContext(deps);
  const consoleOnly = deps.routes === 'console';
  // The console's keys are loaded now, so a process without them fails at start, not on a page.
  openConsole(ctx);
  // A desk listed in CASEWORK_DESKS without its secret fails here, at start, naming the variable.
  const webhooks = consoleOnly ? undefined : createWebhookHandler(ctx, deps.desk ?? deskSettings(deps.config));
  // So does a payment provider chosen without its keys (CASEWORK_PAYMENTS, docs/commerce.md).
  const paymentWebhooks = consoleOnly ? undefined : createPaymentWebhookHandler(ctx, deps.payments ?? selectPayments(deps.config, deps.pool));
  return {
    auth: ctx.auth,
    async handle(req, res) {
      const started = performance.now();
      const trace: Trace = {};
      // While draining, each answer closes its connection so keep-alive callers reconnect elsewhere.
      if (deps.isShuttingDown?.()) res.setHeader('connection', 'close');
      const path = (req.url ?? '/').split('?')[0]?.replace(/(.)\/+$/, '$1') ?? '/';
      let answer: Answer | undefined;
      try {
        answer = webhooks && paymentWebhooks ? await route(ctx, req, res, path, trace, webhooks, paymentWebhooks) : await consoleOnlyRoute(ctx, req, path, trace);
      } catch (error) {
        answer = errorAnswer(error);
        if (answer.status === 500) trace.error = `${(error as Error).name}: ${(error as Error).message}`;
      }
      // Checked again here: a request that began before the drain is answered with it too.
      if (deps.isShuttingDown?.() && !res.headersSent) res.setHeader('connection', 'close');
      if (!res.headersSent && answer) {
        if (answer.html !== undefined) sendHtml(res, answer.status, answer.html, answer.headers);
        else sendJson(res, answer.status, answer.body, answer.headers);
      } else if (!res.writableEnded) res.destroy();
      const status = res.statusCode;
      deps.log({
        ts: new Date().toISOString(),
        level: status >= 500 ? (status === 503 ? 'warn' : 'error') : trace.refused ? 'warn' : 'info',
        msg: 'http request',
        method: req.method ?? 'GET',
        path,
        status,
        ms: Math.round((performance.now() - started) * 10) / 10,
        ...trace,
      });
    },
  };
}
