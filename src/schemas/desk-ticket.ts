// How a casework ticket id names the desk ticket it came from ("zendesk-5158"), so replies find
// their way back without a lookup table. Pure, so the workflow can tell a desk ticket too.

/** Desks that send casework webhooks. */
export type InboundDeskName = 'zendesk' | 'intercom' | 'freshdesk';

const TICKET_ID = /^(zendesk|intercom|freshdesk)-([A-Za-z0-9_]{1,80})$/;
const EXTERNAL_ID = /^[A-Za-z0-9_]{1,80}$/;

/** True when a desk's id can be part of a casework ticket id (letters, digits, "_"; 1-80). */
export function isExternalId(value: string): boolean {
  return EXTERNAL_ID.test(value);
}

/** casework's ticket id for a desk ticket: "zendesk-5158", so ids from two desks never collide. */
export function deskTicketId(desk: InboundDeskName, externalTicketId: string): string {
  return `${desk}-${externalTicketId}`;
}

/** The desk and its ticket id behind a casework ticket id, or undefined for tickets from POST /events. */
export function parseDeskTicketId(ticketId: string): { desk: InboundDeskName; externalTicketId: string } | undefined {
  const match = TICKET_ID.exec(ticketId);
  return match ? { desk: match[1] as InboundDeskName, externalTicketId: match[2]! } : undefined;
}
