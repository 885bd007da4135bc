import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Search attributes the investigation upserts, so operators can filter runs in the web UI. */
export const SA = {
  customerId: defineSearchAttributeKey('CaseworkCustomerId', SearchAttributeType.KEYWORD),
  ticketId: defineSearchAttributeKey('CaseworkTicketId', SearchAttributeType.KEYWORD),
  status: defineSearchAttributeKey('CaseworkStatus', SearchAttributeType.KEYWORD),
  step: defineSearchAttributeKey('CaseworkStep', SearchAttributeType.INT),
  inputTokens: defineSearchAttributeKey('CaseworkInputTokens', SearchAttributeType.INT),
  /** The support desk a ticket came from (zendesk, intercom, freshdesk); absent for tickets from POST /events. */
  desk: defineSearchAttributeKey('CaseworkDesk', SearchAttributeType.KEYWORD),
  /** The desk's own ticket (or conversation) id, as the desk shows it. */
  deskTicketId: defineSearchAttributeKey('CaseworkDeskTicketId', SearchAttributeType.KEYWORD),
} as const;

/** The same attributes as `Name=Type` pairs for `temporal server start-dev --search-attribute`. */
export const SEARCH_ATTRIBUTE_FLAGS: string[] = [
  'CaseworkCustomerId=Keyword',
  'CaseworkTicketId=Keyword',
  'CaseworkStatus=Keyword',
  'CaseworkStep=Int',
  'CaseworkInputTokens=Int',
  'CaseworkDesk=Keyword',
  'CaseworkDeskTicketId=Keyword',
];
