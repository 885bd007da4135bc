import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authenticator } from './auth';
import { createRouteContext, type AppDeps, type RouteContext, type Trace } from './context';
import { CONSOLE_PREFIX, consoleRoute } from './console/routes';
import { errorAnswer, HttpError, sendHtml, sendJson, type Answer } from './http';
import { postEvent } from './routes/events';
import { health } from './routes/health';
import { decide, getInvestigation, workflowIdOf } from './routes/investigations';
import { MEMORY_ROUTE, memoryRoute } from './routes/memory';

export { RETRY_AFTER_SECONDS, type AppDeps, type RequestLog } from './context';

// The HTTP server's request handling, free of sockets and process state so tests drive it with
// injected dependencies. Routes:
//   POST /events                               a ticket event -> 202 {workflowId, eventId}
//   GET  /investigations/:id                   the status query's answer
//   POST /investigations/:id/approve | /deny   {requestId, approver?, reason?} via the validated update
//   GET|PATCH|DELETE /customers/:id/memory…    the memory routes (routes/memory.ts)
//   GET  /healthz                              200 when Temporal answers, else 503 (no credentials needed)
//   GET|POST /console…                         the support team's pages (console/routes.ts), HTML
// Every request gets exactly one answer: each route returns one, and every error becomes one.

/** The request handler and the authenticator it uses. */
export interface App {
  auth: Authenticator;
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

const INVESTIGATION_ROUTE = /^\/investigations\/([^/]+)(?:\/(approve|deny))?$/;

function onlyMethod(method: string, allowed: string, path: string): void {
  if (method !== allowed) throw new HttpError(405, `${method} is not allowed on ${path}; use ${allowed}`, { allow: allowed });
}

/** Finds the route for a path and runs it. */
async function route(ctx: RouteContext, req: IncomingMessage, path: string, trace: Trace): Promise<Answer> {
  const method = req.method ?? 'GET';
  if (path === '/healthz') {
    onlyMethod(method, 'GET', path);
    return health(ctx);
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
  throw new HttpError(404, `no route ${method} ${path.slice(0, 200)}; see GET /healthz, POST /events, GET /investigations/:id`);
}

/** Builds the request handler. Throws when the endpoint is not configured safely (no keys, not open mode). */
export function createApp(deps: AppDeps): App {
  const ctx = createRouteContext(deps);
  return {
    auth: ctx.auth,
    async handle(req, res) {
      const started = performance.now();
      const trace: Trace = {};
      // While draining, each answer closes its connection so keep-alive callers reconnect elsewhere.
      if (deps.isShuttingDown?.()) res.setHeader('connection', 'close');
      const path = (req.url ?? '/').split('?')[0]?.replace(/(.)\/+$/, '$1') ?? '/';
      let answer: Answer;
      try {
        answer = await route(ctx, req, path, trace);
      } catch (error) {
        answer = errorAnswer(error);
        if (answer.status === 500) trace.error = `${(error as Error).name}: ${(error as Error).message}`;
      }
      if (res.headersSent) res.destroy();
      else if (answer.html !== undefined) sendHtml(res, answer.status, answer.html, answer.headers);
      else sendJson(res, answer.status, answer.body, answer.headers);
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
