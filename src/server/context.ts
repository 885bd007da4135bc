import type { IncomingMessage } from 'node:http';
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import type { Config } from '../config';
import type { PaymentProvider } from '../commerce/payment-provider';
import { TranscriptLog } from '../db/transcript-log';
import { bodyCodecOf } from '../temporal/codec/body-codec';
import { codecFor } from '../temporal/data-converter';
import type { DeskSettings } from '../desk/settings';
import type { InvestigationSettings } from '../schemas/investigation';
import { investigationSettings } from '../settings';
import { createAuthenticator, type Authenticator, type Principal } from './auth';
import { kindOf } from '../errors';
import { HttpError } from './http';
import { isTemporalUnavailable } from './unavailable';

// What every route is handed: the wired dependencies, the authenticator, and helpers that
// answer 401 and 503 the same way everywhere.

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
  /** Why the gate refused a ticket event (db/tickets.ts); such a line is a warning. */
  refused?: string;
  /** Desk webhooks: the desk, what became of the delivery (accepted, ignored, rejected, duplicate, failed), its event and ticket. */
  desk?: string;
  outcome?: string;
  eventId?: string;
  ticketId?: string;
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
  /** The payment provider whose webhook is accepted; defaults to the one config chooses (CASEWORK_PAYMENTS). */
  payments?: PaymentProvider;
  /** The desks whose webhooks are accepted; defaults to one built from config (CASEWORK_DESKS). */
  desk?: Pick<DeskSettings, 'inbound'>;
  /** The transcript log the console reads runs kept by reference from; defaults to one on `pool` with the payload codec built from config, as `casework transcript` opens it. */
  transcriptLog?: TranscriptLog;
  /** Which routes to serve: every one (`casework serve`, the default), or only the console and /healthz (`casework console`). */
  routes?: 'all' | 'console';
  /** The clock console sessions expire by (ms since the epoch); Date.now unless a test injects one. */
  now?: () => number;
}

/** Per-request facts the log line reports. */
export interface Trace {
  workflowId?: string;
  customerId?: string;
  principal?: string;
  error?: string;
  refused?: string;
  desk?: string;
  outcome?: string;
  eventId?: string;
  ticketId?: string;
}

/** Seconds a caller should wait before resending after a 503. */
export const RETRY_AFTER_SECONDS = 2;

/** What routes share. */
export interface RouteContext {
  deps: AppDeps;
  auth: Authenticator;
  settings: InvestigationSettings;
  taskQueue: string;
  /** Where the whole transcripts of runs kept by reference are read. */
  transcriptLog: TranscriptLog;
  /** Runs a Temporal call under a deadline; unreachable or too slow becomes 503, retryable. */
  temporal<T>(what: string, fn: () => Promise<T>, timeoutMs?: number): Promise<T>;
  /** The authenticated caller, or 401. */
  principalOf(req: IncomingMessage, trace: Trace): Principal;
  /** How long the update that carries a refund decision may take. */
  updateTimeoutMs: number;
  temporalTimeoutMs: number;
}

/** Temporal did not take the call: the caller resends the same request later and loses nothing. */
export class TemporalDown extends HttpError {
  constructor(what: string) {
    super(503, `Temporal is unreachable or did not answer in time (${what}); nothing was lost: retry the same request`, {
      'retry-after': String(RETRY_AFTER_SECONDS),
    });
  }
}

/** Builds the routes' context. Throws when the endpoint is not configured safely (no keys, not open mode). */
export function createRouteContext(deps: AppDeps): RouteContext {
  const auth = deps.auth ?? createAuthenticator({ apiKeys: deps.config.CASEWORK_API_KEYS, open: deps.config.CASEWORK_HTTP_OPEN === 'true' });
  const temporalTimeoutMs = deps.temporalTimeoutMs ?? 5_000;
  return {
    deps,
    auth,
    settings: investigationSettings(deps.config),
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    transcriptLog: deps.transcriptLog ?? new TranscriptLog(deps.pool, bodyCodecOf(codecFor(deps.config))),
    temporalTimeoutMs,
    updateTimeoutMs: deps.updateTimeoutMs ?? 15_000,
    async temporal<T>(what: string, fn: () => Promise<T>, timeoutMs = temporalTimeoutMs): Promise<T> {
      try {
        return await deps.client.withDeadline(Date.now() + timeoutMs, fn);
      } catch (error) {
        // casework's own errors already say what is down (a Postgres outage inside the call is not Temporal's).
        if (kindOf(error) === undefined && isTemporalUnavailable(error)) throw new TemporalDown(what);
        throw error;
      }
    },
    principalOf(req, trace) {
      const principal = auth.authenticate(req);
      if (!principal) {
        throw new HttpError(401, 'missing or unknown API key; send "Authorization: Bearer <key>"', { 'www-authenticate': 'Bearer realm="casework"' });
      }
      trace.principal = principal.label;
      return principal;
    },
  };
}
