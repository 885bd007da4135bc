import type { IncomingMessage, ServerResponse } from 'node:http';
import { deliverEvent, InvestigationNotFoundError } from '../../client/investigations';
import { createWebhookRoute } from '../../desk/route';
import type { DeskSettings } from '../../desk/settings';
import type { InboundDeskName } from '../../desk/types';
import { processMetrics } from '../../observability/metrics';
import type { RouteContext, Trace } from '../context';

/** Answers one POST /webhooks/{desk} itself (the desk route writes its own answer). */
export type WebhookHandler = (desk: InboundDeskName, req: IncomingMessage, res: ServerResponse, trace: Trace) => Promise<void>;

/**
 * POST /webhooks/{zendesk|intercom|freshdesk}: the desk's own webhook, verified by its adapter
 * (src/desk/), then delivered exactly as a POST /events body is: the ticket gate first (a ticket
 * belongs to one customer: another's event is 409; an event id is admitted once), then
 * signal-with-start. The desk's signature is its credential, so no API key is asked for.
 */
export function createWebhookHandler(ctx: RouteContext, settings: Pick<DeskSettings, 'inbound'>): WebhookHandler {
  const route = createWebhookRoute({
    settings,
    async deliver({ event }) {
      try {
        await ctx.temporal('delivering the webhook', () => deliverEvent(ctx.deps.client, ctx.deps.pool, event, { taskQueue: ctx.taskQueue, settings: ctx.settings }));
      } catch (error) {
        // The desk closed a ticket casework never investigated: nothing to close, nothing for the desk to retry.
        if (error instanceof InvestigationNotFoundError) return;
        throw error;
      }
    },
    // The request's own log line (app.ts) carries the outcome; nothing else is logged per delivery.
    log: () => undefined,
    ...processMetrics().desk.route,
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
