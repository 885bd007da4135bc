import type { IncomingMessage } from 'node:http';
import { deliverEvent, InvestigationNotFoundError } from '../../client/investigations';
import { EventRefusedError } from '../../db/tickets';
import { parseDeskTicketId } from '../../desk/types';
import { investigationId, parseTicketEvent } from '../../schemas/event';
import { maySpeakFor, soleCustomer } from '../auth';
import type { RouteContext, Trace } from '../context';
import { HttpError, isObject, readJsonBody, type Answer } from '../http';

/** POST /events: a ticket event, delivered by signal-with-start; 202 {workflowId, eventId}. */
export async function postEvent(ctx: RouteContext, req: IncomingMessage, trace: Trace): Promise<Answer> {
  const principal = ctx.principalOf(req, trace);
  const body = await readJsonBody(req, undefined, 'a JSON object: a ticket event');
  if (!isObject(body)) throw new HttpError(400, 'request body must be a JSON object: a ticket event');
  const raw = { ...body };
  // A key that speaks for one customer may leave customerId out: it comes from the credentials.
  if (raw.customerId === undefined && soleCustomer(principal)) raw.customerId = soleCustomer(principal);
  if (typeof raw.customerId === 'string' && !maySpeakFor(principal, raw.customerId)) {
    trace.customerId = raw.customerId;
    throw new HttpError(403, `these credentials may not send events for customer ${raw.customerId}`);
  }
  const event = parseTicketEvent(raw);
  // Replies to such a ticket go to that desk's ticket: only the desk's own signed webhook may open one.
  const desk = parseDeskTicketId(event.ticketId);
  if (desk) throw new HttpError(400, `ticketId: "${desk.desk}-…" ids are reserved for tickets from POST /webhooks/${desk.desk}; use another ticket id`);
  trace.customerId = event.customerId;
  trace.workflowId = investigationId(event.ticketId);
  const delivered = await ctx
    .temporal('delivering the event', () => deliverEvent(ctx.deps.client, ctx.deps.pool, event, { taskQueue: ctx.taskQueue, settings: ctx.settings }))
    .catch((error: Error) => {
      // Another customer's ticket, or a reused event id: 409 naming the conflict, logged as a warning.
      if (error instanceof EventRefusedError) trace.refused = error.reason;
      // Only ticket.closed needs a running investigation; the others start one.
      if (error instanceof InvestigationNotFoundError) throw new HttpError(404, error.message);
      throw error;
    });
  // A duplicate is answered exactly as its first delivery was: the sender did nothing wrong.
  return { status: 202, body: { workflowId: delivered.workflowId, eventId: event.eventId } };
}
