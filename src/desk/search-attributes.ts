import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { AcceptedWebhook } from './types';

/** Search attributes for the desk a ticket came from; to be merged into SA in src/schemas/search-attributes.ts. */
export const DESK_SA = {
  desk: defineSearchAttributeKey('CaseworkDesk', SearchAttributeType.KEYWORD),
  deskTicketId: defineSearchAttributeKey('CaseworkDeskTicketId', SearchAttributeType.KEYWORD),
} as const;

/** The same as `Name=Type` flags for `temporal server start-dev --search-attribute`. */
export const DESK_SEARCH_ATTRIBUTE_FLAGS: string[] = ['CaseworkDesk=Keyword', 'CaseworkDeskTicketId=Keyword'];

/** The typed search attributes to add to signal-with-start for an accepted webhook. */
export function deskSearchAttributes(accepted: Pick<AcceptedWebhook, 'ref'>) {
  return [
    { key: DESK_SA.desk, value: accepted.ref.desk },
    { key: DESK_SA.deskTicketId, value: accepted.ref.externalTicketId },
  ];
}
