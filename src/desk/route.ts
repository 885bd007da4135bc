import type { IncomingMessage, ServerResponse } from 'node:http';
import { httpStatusOf, retryAfterOf } from '../errors';
import { acceptWebhook, createRecentDeliveries } from './inbound';
import type { DeskSettings } from './settings';
import type { AcceptedWebhook, InboundDeskName, RejectionReason, WebhookResult } from './types';

// POST /webhooks/{zendesk|intercom|freshdesk}, free of the rest of the server so the lead wires
// it with one line. The answer comes as soon as the event is durably handed to Temporal
// (signal-with-start, milliseconds); the investigation itself runs asynchronously. A desk gets
// 503 with Retry-After only when Temporal did not take the event, so its retry is not lost.

/** Largest webhook body read; Zendesk and Intercom cap their payloads well below this. */
export const MAX_WEBHOOK_BYTES = 256 * 1024;

/** One log line per delivery. Never the body or a header value. */
export interface WebhookLog {
  desk: InboundDeskName;
  outcome: WebhookResult['outcome'] | 'duplicate' | 'failed';
  status: number;
  reason?: string;
  eventId?: string;
  ticketId?: string;
  ms: number;
}

/** What the route needs: the server passes deliverEvent (signal-with-start) and its metrics. */
export interface WebhookRouteDeps {
  settings: Pick<DeskSettings, 'inbound'>;
  /** Hands the event to Temporal (deliverEvent from the client module). Throws when Temporal is unreachable. */
  deliver(accepted: AcceptedWebhook): Promise<void>;
  log(entry: WebhookLog): void;
  /** Metric hooks (names in DESK_METRICS). */
  received?(desk: InboundDeskName, outcome: WebhookResult['outcome']): void;
  rejected?(desk: InboundDeskName, reason: RejectionReason): void;
  acceptSeconds?(desk: InboundDeskName, seconds: number): void;
  now?: () => Date;
}

/** The webhook path's desk, or undefined when the path is not a webhook route. */
export function webhookRouteDesk(method: string | undefined, path: string): InboundDeskName | undefined {
  const match = /^\/webhooks\/(zendesk|intercom|freshdesk)\/?$/.exec(path);
  return method === 'POST' && match ? (match[1] as InboundDeskName) : undefined;
}

/** Reads the raw body bytes, refusing more than `limit`. */
async function readRaw(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Builds the handler for POST /webhooks/:desk. */
export function createWebhookRoute(deps: WebhookRouteDeps) {
  const recent = createRecentDeliveries();
  const now = deps.now ?? (() => new Date());
  const answer = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
    res.end(JSON.stringify(body));
  };

  /** Handles one delivery; `report` also gets its log entry (the server puts it on the request's log line). */
  return async function handleWebhook(desk: InboundDeskName, req: IncomingMessage, res: ServerResponse, report?: (entry: WebhookLog) => void): Promise<void> {
    const started = performance.now();
    const log = (entry: Omit<WebhookLog, 'desk' | 'ms'>) => {
      const full: WebhookLog = { desk, ms: Math.round((performance.now() - started) * 10) / 10, ...entry };
      deps.log(full);
      report?.(full);
    };
    const body = await readRaw(req, MAX_WEBHOOK_BYTES);
    if (!body) {
      deps.received?.(desk, 'rejected');
      deps.rejected?.(desk, 'malformed');
      log({ outcome: 'rejected', status: 413, reason: 'malformed' });
      return answer(res, 413, { error: `body: larger than ${MAX_WEBHOOK_BYTES} bytes` });
    }
    const verifyStart = performance.now();
    const result = acceptWebhook(deps.settings, desk, { headers: req.headers, body }, now());
    if (!result) {
      log({ outcome: 'failed', status: 404, reason: 'desk not configured' });
      return answer(res, 404, { error: `${desk} webhooks are not configured (CASEWORK_DESKS)` });
    }
    deps.acceptSeconds?.(desk, (performance.now() - verifyStart) / 1000);
    deps.received?.(desk, result.outcome);
    if (result.outcome === 'rejected') {
      deps.rejected?.(desk, result.reason);
      log({ outcome: 'rejected', status: result.status, reason: result.reason });
      return answer(res, result.status, { error: result.message });
    }
    if (result.outcome === 'ignored') {
      log({ outcome: 'ignored', status: 202, reason: result.reason });
      return answer(res, 202, { ignored: result.reason });
    }
    const { eventId, ticketId } = result.event;
    if (recent.has(eventId)) {
      log({ outcome: 'duplicate', status: 200, eventId, ticketId });
      return answer(res, 200, { eventId, duplicate: true });
    }
    try {
      await deps.deliver(result);
    } catch (error) {
      const status = httpStatusOf(error) === 500 ? 503 : httpStatusOf(error);
      log({ outcome: 'failed', status, eventId, ticketId, reason: (error as Error).name });
      return answer(
        res,
        status,
        { error: status === 503 ? 'casework could not hand the event to Temporal; retry' : (error as Error).message },
        status === 503 ? { 'retry-after': String(retryAfterOf(error) ?? 2) } : {},
      );
    }
    recent.remember(eventId);
    log({ outcome: 'accepted', status: 202, eventId, ticketId });
    return answer(res, 202, { eventId, ticketId });
  };
}
