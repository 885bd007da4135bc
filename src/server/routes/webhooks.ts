import type { IncomingMessage, ServerResponse } from 'node:http';
import { deliverEvent, InvestigationNotFoundError } from '../../client/investigations';
import { countWaiting, mappedCustomer, parkDelivery, requesterKey } from '../../db/parked-deliveries';
import { EventRefusedError } from '../../db/tickets';
import { createWebhookRoute } from '../../desk/route';
import type { DeskSettings } from '../../desk/settings';
import type { InboundDeskName } from '../../desk/types';
import { processMetrics } from '../../observability/metrics';
import { bodyCodecOf } from '../../temporal/codec/body-codec';
import { codecFor } from '../../temporal/data-converter';
import type { RouteContext, Trace } from '../context';

/** Answers one POST /webhooks/{desk} itself (the desk route writes its own answer). */
export type WebhookHandler = (desk: InboundDeskName, req: IncomingMessage, res: ServerResponse, trace: Trace) => Promise<void>;

/**
 * POST /webhooks/{zendesk|intercom|freshdesk}: the desk's own webhook, verified by its adapter
 * (src/desk/), then delivered exactly as a POST /events body is: the ticket gate first (a ticket
 * belongs to one customer; an event id is admitted once), then signal-with-start. What the gate
 * refuses, and what comes from a requester nobody mapped, is parked in Postgres for a person
 * (db/parked-deliveries.ts) and answered 2xx. The desk's signature is its credential, so no API
 * key is asked for.
 */
export function createWebhookHandler(ctx: RouteContext, settings: Pick<DeskSettings, 'inbound'>): WebhookHandler {
  const pool = ctx.deps.pool;
  // Parked deliveries hold what the customer wrote: encrypted by the payload codec, as the transcript log is.
  const codec = bodyCodecOf(codecFor(ctx.deps.config));
  const metrics = processMetrics().desk;
  metrics.watchParked(() => countWaiting(pool));
  const route = createWebhookRoute({
    settings,
    async deliver({ event }) {
      try {
        const delivered = await ctx.temporal('delivering the webhook', () => deliverEvent(ctx.deps.client, pool, event, { taskQueue: ctx.taskQueue, settings: ctx.settings }));
        return { duplicate: delivered.duplicate };
      } catch (error) {
        // The desk closed a ticket casework never investigated: nothing to close, nothing for the desk to retry.
        if (error instanceof InvestigationNotFoundError) return { duplicate: false };
        throw error;
      }
    },
    resolve: ({ desk, requester }) => {
      const key = requesterKey(requester);
      return key ? mappedCustomer(pool, desk, key) : Promise.resolve(undefined);
    },
    park: ({ desk, draft, requester, ref }, reason) =>
      parkDelivery(pool, codec, {
        desk,
        eventId: draft.eventId,
        ticketId: draft.ticketId,
        requester: requesterKey(requester) ?? 'unknown',
        reason,
        body: { draft, requester, ref },
      }),
    parkReasonOf: (error) => (error instanceof EventRefusedError ? error.reason : undefined),
    // The request's own log line (app.ts) carries the outcome; nothing else is logged per delivery.
    log: () => undefined,
    ...metrics.route,
  });
  return (desk, req, res, trace) =>
    route(desk, req, res, (entry) => {
      trace.desk = entry.desk;
      trace.outcome = entry.outcome;
      if (entry.reason) trace.refused = entry.reason;
      if (entry.eventId) trace.eventId = entry.eventId;
      if (entry.ticketId) trace.ticketId = entry.ticketId;
    });
}
