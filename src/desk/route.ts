import type { IncomingMessage, ServerResponse } from 'node:http';
import { httpStatusOf, retryAfterOf } from '../errors';
import { completeEvent } from './finish';
import { acceptWebhook } from './inbound';
import type { DeskSettings } from './settings';
import type { AcceptedWebhook, InboundDeskName, RejectionReason, UnmappedWebhook, WebhookResult } from './types';

// POST /webhooks/{zendesk|intercom|freshdesk}, free of the rest of the server so the lead wires
// it with one line. The answer comes as soon as the event is durably handed to Temporal
// (signal-with-start, milliseconds); the investigation itself runs asynchronously. A desk gets
// 503 with Retry-After only when Temporal or Postgres did not take the event, so its retry is not
// lost. Everything a retry must agree on (seen before, delivered, parked) is decided in Postgres,
// so a redelivery to another replica, or after a restart, is answered as the first one was.
// A genuine delivery never gets a 4xx: a desk's breaker counts them, and no retry could fix it.

/** Largest webhook body read; Zendesk and Intercom cap their payloads well below this. */
export const MAX_WEBHOOK_BYTES = 256 * 1024;

/** What became of one delivery, as the desk was answered; the label of casework_desk_deliveries_total. */
export type DeliveryOutcome = 'accepted' | 'duplicate' | 'parked' | 'ignored' | 'refused' | 'failed';

/** One log line per delivery. Never the body or a header value. */
export interface WebhookLog {
  desk: InboundDeskName;
  outcome: DeliveryOutcome;
  status: number;
  reason?: string;
  eventId?: string;
  ticketId?: string;
  ms: number;
}

/** What the server does with a delivery it could not hand on: which investigation-side refusal parked it. */
export type ParkReason = 'unmapped_requester' | 'ticket_owner' | 'event_reused';

/** The server's answer to handing an event on. */
export interface Handed {
  /** True when the gate had delivered this event before: nothing was sent again. */
  duplicate: boolean;
}

/** What the route needs: the server passes deliverEvent (gate + signal-with-start), Postgres lookups and its metrics. */
export interface WebhookRouteDeps {
  settings: Pick<DeskSettings, 'inbound'>;
  /**
   * Hands the event to Temporal through the ticket gate. Throws when Temporal or Postgres is
   * unreachable (503), or with `parkReasonOf(error)` defined when the gate refused it.
   */
  deliver(accepted: AcceptedWebhook): Promise<Handed>;
  /** The customer a person mapped this requester to (Postgres), when the configuration maps nobody. */
  resolve(unmapped: UnmappedWebhook): Promise<string | undefined>;
  /** Parks a delivery for a person (Postgres), idempotent by event id: false when it was parked before. */
  park(delivery: UnmappedWebhook, reason: ParkReason): Promise<boolean>;
  /** Why the gate refused an event, when `error` is such a refusal; undefined for every other error. */
  parkReasonOf(error: unknown): ParkReason | undefined;
  log(entry: WebhookLog): void;
  /** Metric hooks (names in DESK_METRICS). */
  received?(desk: InboundDeskName, outcome: WebhookResult['outcome']): void;
  rejected?(desk: InboundDeskName, reason: RejectionReason): void;
  delivered?(desk: InboundDeskName, outcome: DeliveryOutcome): void;
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

/** An accepted delivery as an unmapped one, for parking what the gate refused. */
function asParkable(accepted: AcceptedWebhook, desk: InboundDeskName): UnmappedWebhook {
  const { customerId: _customer, ...draft } = accepted.event;
  return { outcome: 'unmapped', desk, draft, requester: accepted.requester, ref: accepted.ref };
}

/** Builds the handler for POST /webhooks/:desk. */
export function createWebhookRoute(deps: WebhookRouteDeps) {
  const now = deps.now ?? (() => new Date());
  const answer = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
    res.end(JSON.stringify(body));
  };

  /** Handles one delivery; `report` also gets its log entry (the server puts it on the request's log line). */
  return async function handleWebhook(desk: InboundDeskName, req: IncomingMessage, res: ServerResponse, report?: (entry: WebhookLog) => void): Promise<void> {
    const started = performance.now();
    const finish = (res: ServerResponse, entry: Omit<WebhookLog, 'desk' | 'ms'>, body: unknown, headers?: Record<string, string>) => {
      const full: WebhookLog = { desk, ms: Math.round((performance.now() - started) * 10) / 10, ...entry };
      deps.delivered?.(desk, entry.outcome);
      deps.log(full);
      report?.(full);
      answer(res, entry.status, body, headers);
    };
    const unavailable = (error: unknown, ids: { eventId: string; ticketId: string }) => {
      const status = httpStatusOf(error) === 500 ? 503 : httpStatusOf(error);
      finish(
        res,
        { outcome: 'failed', status, ...ids, reason: (error as Error).name },
        { error: status === 503 ? 'casework could not take the delivery (Temporal or Postgres unreachable); retry' : (error as Error).message },
        status === 503 ? { 'retry-after': String(retryAfterOf(error) ?? 2) } : {},
      );
    };
    const body = await readRaw(req, MAX_WEBHOOK_BYTES);
    if (!body) {
      deps.received?.(desk, 'rejected');
      deps.rejected?.(desk, 'malformed');
      return finish(res, { outcome: 'refused', status: 413, reason: 'malformed' }, { error: `body: larger than ${MAX_WEBHOOK_BYTES} bytes` });
    }
    const verifyStart = performance.now();
    let result = acceptWebhook(deps.settings, desk, { headers: req.headers, body }, now());
    if (!result) {
      return finish(res, { outcome: 'refused', status: 404, reason: 'desk not configured' }, { error: `${desk} webhooks are not configured (CASEWORK_DESKS)` });
    }
    deps.acceptSeconds?.(desk, (performance.now() - verifyStart) / 1000);
    deps.received?.(desk, result.outcome);
    if (result.outcome === 'rejected') {
      deps.rejected?.(desk, result.reason);
      // 401: not from the desk. 202: from the desk but unreadable; the body and the log name why.
      const said = result.status === 202 ? { refused: `${result.reason}: ${result.message}` } : { error: result.message };
      return finish(res, { outcome: 'refused', status: result.status, reason: `${result.reason}: ${result.message}` }, said);
    }
    if (result.outcome === 'ignored') return finish(res, { outcome: 'ignored', status: 202, reason: result.reason }, { ignored: result.reason });

    const ids = {
      eventId: (result.outcome === 'accepted' ? result.event : result.draft).eventId,
      ticketId: (result.outcome === 'accepted' ? result.event : result.draft).ticketId,
    };
    const parkIt = async (unmapped: UnmappedWebhook, reason: ParkReason) => {
      const fresh = await deps.park(unmapped, reason);
      return finish(res, { outcome: fresh ? 'parked' : 'duplicate', status: fresh ? 202 : 200, reason, ...ids }, { ...ids, parked: reason, ...(fresh ? {} : { duplicate: true }) });
    };
    try {
      if (result.outcome === 'unmapped') {
        const unmapped = result;
        const customerId = await deps.resolve(unmapped);
        if (!customerId) return await parkIt(unmapped, 'unmapped_requester');
        result = completeEvent(desk, unmapped.draft, customerId, unmapped.requester, unmapped.ref);
        if (result.outcome === 'rejected') {
          deps.rejected?.(desk, result.reason);
          return finish(res, { outcome: 'refused', status: 202, reason: `${result.reason}: ${result.message}` }, { refused: `${result.reason}: ${result.message}` });
        }
        return await handOn(result);
      }
      return await handOn(result);
    } catch (error) {
      return unavailable(error, ids);
    }

    async function handOn(accepted: AcceptedWebhook): Promise<void> {
      let handed: Handed;
      try {
        handed = await deps.deliver(accepted);
      } catch (error) {
        const reason = deps.parkReasonOf(error);
        if (!reason) throw error;
        // The gate refused it (another customer's ticket, an id reused with another body): a person decides.
        return parkIt(asParkable(accepted, desk), reason);
      }
      if (handed.duplicate) return finish(res, { outcome: 'duplicate', status: 200, ...ids }, { ...ids, duplicate: true });
      return finish(res, { outcome: 'accepted', status: 202, ...ids }, ids);
    }
  };
}
