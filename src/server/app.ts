import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { z } from 'zod';
import { DecisionRejectedError, InvestigationNotFoundError, decideRefund, deliverEvent, readStatus } from '../client/investigations';
import { handleMemoryRequest } from './routes/memory';
import type { Config } from '../config';
import { InvalidEventError, investigationId, parseTicketEvent } from '../schemas/event';
import { describeIssues } from '../schemas/issues';
import type { InvestigationSettings } from '../schemas/investigation';
import { investigationSettings } from '../settings';
import {
  createAuthenticator,
  mayDecideAs,
  mayReadAll,
  maySpeakFor,
  soleApprover,
  soleCustomer,
  type Authenticator,
  type Principal,
} from './auth';
import { HttpError, decodeSegment, readJsonBody, sendJson } from './http';
import { isTemporalUnavailable } from './unavailable';

// The ticket-event endpoint's request handling, free of sockets and process state so tests
// drive it with injected dependencies. Routes:
//   POST /events                               a ticket event -> 202 {workflowId, eventId}
//   GET  /investigations/:id                   the status query's answer
//   POST /investigations/:id/approve | /deny   {requestId, approver?, reason?} via the validated update
//   GET|PATCH|DELETE /customers/:id/memory…    the memory routes (src/server/routes/memory.ts)
//   GET  /healthz                              200 when Temporal answers, else 503 (no credentials needed)

/** One line per request: what was asked, the answer, how long it took. Never bodies. */
export interface RequestLog {
  ts: string;
  level: 'info' | 'warn' | 'error';
  msg: 'http request';
  method: string;
  path: string;
  status: number;
  ms: number;
  workflowId?: string;
  customerId?: string;
  /** Which credential asked ("key:1a2b3c4d"), never the key itself. */
  principal?: string;
  /** For 5xx answers: the error's name and message, for the operator. */
  error?: string;
}

/** What the request handler needs; the server wires real ones, tests their own. */
export interface AppDeps {
  client: Client;
  pool: Pool;
  config: Config;
  log: (entry: RequestLog) => void;
  /** Defaults to one built from config (CASEWORK_API_KEYS / CASEWORK_HTTP_OPEN). */
  auth?: Authenticator;
  /** Longest wait for Temporal on one event, status read or health check before answering 503. */
  temporalTimeoutMs?: number;
  /** Longest wait for a refund decision's update to complete (the worker must run the validator). */
  updateTimeoutMs?: number;
  /** True once the server is draining; health checks then answer 503 so traffic moves elsewhere. */
  isShuttingDown?: () => boolean;
}

/** The request handler and the authenticator it uses. */
export interface App {
  auth: Authenticator;
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

/** Seconds a caller should wait before resending after a 503. */
export const RETRY_AFTER_SECONDS = 2;

const WORKFLOW_ID = /^[A-Za-z0-9_-]{1,120}$/;
const INVESTIGATION_ROUTE = /^\/investigations\/([^/]+)(?:\/(approve|deny))?$/;
const MEMORY_ROUTE = /^\/customers\/([^/]*)\/memory(?:\/.*)?$/;

const DecisionBody = z.object({
  requestId: z.string().min(1).max(200),
  approver: z.string().trim().min(1).max(100).optional(),
  reason: z.string().max(2000).optional(),
});

/** Per-request facts the log line reports. */
interface Trace {
  workflowId?: string;
  customerId?: string;
  principal?: string;
  error?: string;
}

class TemporalDown extends HttpError {
  constructor(what: string) {
    super(503, `Temporal is unreachable or did not answer in time (${what}); nothing was lost: retry the same request`, {
      'retry-after': String(RETRY_AFTER_SECONDS),
    });
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Builds the request handler. Throws when the endpoint is not configured safely (no keys, not open mode). */
export function createApp(deps: AppDeps): App {
  const auth = deps.auth ?? createAuthenticator({ apiKeys: deps.config.CASEWORK_API_KEYS, open: deps.config.CASEWORK_HTTP_OPEN === 'true' });
  const settings: InvestigationSettings = investigationSettings(deps.config);
  const taskQueue = deps.config.TEMPORAL_TASK_QUEUE;
  const temporalTimeoutMs = deps.temporalTimeoutMs ?? 5_000;
  const updateTimeoutMs = deps.updateTimeoutMs ?? 15_000;
  const { client } = deps;

  /** Runs a Temporal call under a deadline; unreachable or too slow becomes 503, retryable. */
  async function temporal<T>(what: string, fn: () => Promise<T>, timeoutMs = temporalTimeoutMs): Promise<T> {
    try {
      return await client.withDeadline(Date.now() + timeoutMs, fn);
    } catch (error) {
      if (isTemporalUnavailable(error)) throw new TemporalDown(what);
      throw error;
    }
  }

  function principalOf(req: IncomingMessage, trace: Trace): Principal {
    const principal = auth.authenticate(req);
    if (!principal) {
      throw new HttpError(401, 'missing or unknown API key; send "Authorization: Bearer <key>"', { 'www-authenticate': 'Bearer realm="casework"' });
    }
    trace.principal = principal.label;
    return principal;
  }

  async function postEvent(req: IncomingMessage, trace: Trace): Promise<[number, unknown]> {
    const principal = principalOf(req, trace);
    const body = await readJsonBody(req);
    if (!isObject(body)) throw new HttpError(400, 'request body must be a JSON object: a ticket event');
    const raw = { ...body };
    // A key that speaks for one customer may leave customerId out: it comes from the credentials.
    if (raw.customerId === undefined && soleCustomer(principal)) raw.customerId = soleCustomer(principal);
    if (typeof raw.customerId === 'string' && !maySpeakFor(principal, raw.customerId)) {
      trace.customerId = raw.customerId;
      throw new HttpError(403, `these credentials may not send events for customer ${raw.customerId}`);
    }
    const event = parseTicketEvent(raw);
    trace.customerId = event.customerId;
    trace.workflowId = investigationId(event.ticketId);
    const delivered = await temporal('delivering the event', () => deliverEvent(client, event, { taskQueue, settings })).catch((error: Error) => {
      // Only ticket.closed needs a running investigation; the others start one.
      if (error instanceof InvestigationNotFoundError) throw new HttpError(404, error.message);
      throw error;
    });
    return [202, { workflowId: delivered.workflowId, eventId: event.eventId }];
  }

  function workflowIdOf(segment: string, trace: Trace): string {
    const id = decodeSegment(segment);
    const workflowId = id.startsWith('investigation-') ? id : investigationId(id);
    if (!WORKFLOW_ID.test(workflowId)) throw new HttpError(400, 'investigation id must be letters, digits, "-" and "_" (e.g. investigation-T-1001)');
    trace.workflowId = workflowId;
    return workflowId;
  }

  const notFound = (workflowId: string) => new HttpError(404, `no investigation ${workflowId}`);

  async function getInvestigation(principal: Principal, workflowId: string, trace: Trace): Promise<[number, unknown]> {
    const status = await temporal('reading the status', () => readStatus(client, workflowId)).catch((error: Error) => {
      if (error instanceof InvestigationNotFoundError) throw notFound(workflowId);
      // A run that has not finished its first workflow task yet has no query handler.
      if (error.name === 'QueryNotRegisteredError') {
        throw new HttpError(503, `investigation ${workflowId} is starting; ask again shortly`, { 'retry-after': '1' });
      }
      throw error;
    });
    // Another customer's investigation is "not found", so a scoped key cannot probe ticket ids.
    if (!mayReadAll(principal) && !principal.customers.has(status.customerId)) throw notFound(workflowId);
    trace.customerId = status.customerId;
    return [200, status];
  }

  async function decide(req: IncomingMessage, principal: Principal, workflowId: string, decision: 'approved' | 'denied'): Promise<[number, unknown]> {
    if (principal.approvers.size === 0) {
      throw new HttpError(403, 'these credentials may not decide refunds; use a key with an approver:<name> grant');
    }
    const body = await readJsonBody(req);
    const parsed = DecisionBody.safeParse(body);
    if (!parsed.success) throw new HttpError(400, `invalid decision: ${describeIssues(parsed.error)}`);
    const approver = parsed.data.approver ?? soleApprover(principal);
    if (!approver) throw new HttpError(400, 'invalid decision: approver: required (the name of the person deciding)');
    if (!mayDecideAs(principal, approver)) throw new HttpError(403, `these credentials may not decide refunds as ${approver}`);
    try {
      const result = await temporal(
        'sending the decision',
        () =>
          decideRefund(client, workflowId, {
            requestId: parsed.data.requestId,
            decision,
            approver,
            ...(parsed.data.reason ? { reason: parsed.data.reason } : {}),
          }),
        updateTimeoutMs,
      );
      return [200, { workflowId, requestId: result.requestId, decision: result.decision, approver }];
    } catch (error) {
      if (error instanceof InvestigationNotFoundError) throw notFound(workflowId);
      if (error instanceof DecisionRejectedError) {
        // Already decided is a conflict with the run's state; everything else the validator refuses is an unacceptable request.
        throw new HttpError(/already been decided/.test(error.message) ? 409 : 422, error.message);
      }
      throw error;
    }
  }

  async function memory(req: IncomingMessage, res: ServerResponse, customerSegment: string, trace: Trace): Promise<void> {
    const principal = principalOf(req, trace);
    const customerId = decodeSegment(customerSegment);
    trace.customerId = customerId;
    if (!maySpeakFor(principal, customerId)) throw new HttpError(403, `these credentials may not access the memory of customer ${customerId}`);
    // The audit trail names the credential; only the trusted ticketing system may relay which person acted.
    const relayed = principal.anyCustomer ? [req.headers['actor'], req.headers['x-actor']].flat().find((v) => v?.trim()) : undefined;
    req.headers['actor'] = relayed ? `${relayed.trim().slice(0, 150)} via ${principal.label}` : principal.label;
    delete req.headers['x-actor'];
    await handleMemoryRequest(req, res, { pool: deps.pool });
  }

  async function health(): Promise<[number, unknown]> {
    if (deps.isShuttingDown?.()) return [503, { error: 'shutting down', retryable: true }];
    try {
      await temporal('health check', () => client.workflowService.getSystemInfo({}), Math.min(temporalTimeoutMs, 3_000));
      return [200, { status: 'ok', temporal: 'ok', auth: auth.mode }];
    } catch (error) {
      const detail = error instanceof TemporalDown ? 'no answer' : `${(error as Error).name}: ${(error as Error).message}`;
      return [503, { error: `Temporal at ${deps.config.TEMPORAL_ADDRESS} is unreachable (${detail})`, retryable: true }];
    }
  }

  async function route(req: IncomingMessage, res: ServerResponse, path: string, trace: Trace): Promise<[number, unknown] | undefined> {
    const method = req.method ?? 'GET';
    const onlyMethod = (allowed: string) => {
      if (method !== allowed) throw new HttpError(405, `${method} is not allowed on ${path}; use ${allowed}`, { allow: allowed });
    };
    if (path === '/healthz') {
      onlyMethod('GET');
      return health();
    }
    if (path === '/events') {
      onlyMethod('POST');
      return postEvent(req, trace);
    }
    const investigation = INVESTIGATION_ROUTE.exec(path);
    if (investigation) {
      const [, segment, action] = investigation;
      onlyMethod(action ? 'POST' : 'GET');
      const principal = principalOf(req, trace);
      const workflowId = workflowIdOf(segment, trace);
      if (!action) return getInvestigation(principal, workflowId, trace);
      return decide(req, principal, workflowId, action === 'approve' ? 'approved' : 'denied');
    }
    const mem = MEMORY_ROUTE.exec(path);
    if (mem) {
      await memory(req, res, mem[1], trace);
      return undefined;
    }
    throw new HttpError(404, `no route ${method} ${path}; see GET /healthz, POST /events, GET /investigations/:id`);
  }

  return {
    auth,
    async handle(req, res) {
      const started = performance.now();
      const trace: Trace = {};
      // While draining, each answer closes its connection so keep-alive callers reconnect elsewhere.
      if (deps.isShuttingDown?.()) res.setHeader('connection', 'close');
      const path = (req.url ?? '/').split('?')[0].replace(/(.)\/+$/, '$1');
      try {
        const answer = await route(req, res, path, trace);
        if (answer) sendJson(res, answer[0], answer[1]);
      } catch (error) {
        if (error instanceof HttpError) {
          sendJson(res, error.status, error.status === 503 ? { error: error.message, retryable: true } : { error: error.message }, error.headers);
        } else if (error instanceof InvalidEventError) {
          sendJson(res, 400, { error: error.message, issues: error.issues });
        } else {
          // The cause goes to the log, not to the caller: it may name hosts or internals.
          trace.error = `${(error as Error).name}: ${(error as Error).message}`;
          if (!res.headersSent) sendJson(res, 500, { error: 'the request failed inside casework; see the server log' });
          else res.destroy();
        }
      }
      const status = res.statusCode;
      deps.log({
        ts: new Date().toISOString(),
        level: status >= 500 ? (status === 503 ? 'warn' : 'error') : 'info',
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
