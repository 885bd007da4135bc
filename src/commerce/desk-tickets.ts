import type { DeskClient } from '../desk/client';
import { waitingOutRateLimits, type RateLimitPolicy } from '../desk/rate-limit-wait';
import { parseDeskTicketId, type DeskName } from '../desk/types';
import type { TicketSource } from './shop';

// Earlier tickets from the desk where it has them. A ticket that came from a configured desk
// (casework's id "zendesk-5158") is answered from that desk: its requester's other tickets,
// read through the desk's client, its short 429s waited out inside the call, longer ones and
// outages failing the attempt for the tool activity's retry. A ticket from POST /events, or from a
// desk casework does not read (not configured, or the generic webhook), is answered from
// casework's own record, as before. The tools shape either the same way above the port.

/** The ticket source that reads from the ticket's desk when it can, else from `own`. */
export function deskTicketSource(clients: ReadonlyMap<DeskName, DeskClient>, own: TicketSource, rateLimit: RateLimitPolicy): TicketSource {
  const readable = [...clients.values()].filter((c) => c.requesterTickets).map((c) => c.desk);
  if (readable.length === 0) return own;
  return {
    name: `${readable.join('+')} (else ${own.name})`,
    async earlierTickets(customerId, page, ticketId) {
      const ref = ticketId === undefined ? undefined : parseDeskTicketId(ticketId);
      const client = ref && clients.get(ref.desk);
      if (!ref || !client?.requesterTickets) return own.earlierTickets(customerId, page, ticketId);
      const desk = client as Required<Pick<DeskClient, 'requesterTickets'>>;
      return waitingOutRateLimits(() => desk.requesterTickets(ref.externalTicketId, page), rateLimit);
    },
  };
}
