import { FRESHDESK_TOKEN_HEADER } from '../../desk/freshdesk-inbound';
import { INTERCOM_SIGNATURE_HEADER, signIntercom } from '../../desk/intercom-inbound';
import type { InboundDeskName } from '../../desk/types';
import type { DeskStandin } from '../desk-standin';

// Signed webhook deliveries for the desk bench, each a new ticket (so each starts a workflow),
// shaped as the desks document them: Zendesk's comment_added from the stand-in's own sender;
// Intercom's notification_event (conversation.user.created, data.item a Conversation) and
// Freshdesk's automation-rule body (docs/desks.md) built here, with the test fixtures' fields.

/** One delivery as a desk sends it: the exact bytes and headers. */
export interface BenchDelivery {
  desk: InboundDeskName;
  body: Buffer;
  headers: Record<string, string>;
}

/** The secrets the bench's server verifies with, and the desk users it maps to one customer. */
export interface BenchDeskSecrets {
  intercomClientSecret: string;
  freshdeskToken: string;
  zendeskRequester: number;
  intercomContact: string;
  freshdeskEmail: string;
}

function intercomCreated(conversationId: string, partId: string, contactId: string, createdAt: number): unknown {
  const author = { type: 'user', id: contactId, name: 'Priya Raman', email: 'priya@example.com' };
  return {
    type: 'notification_event',
    app_id: 'a86dr8yl',
    data: {
      type: 'notification_event_data',
      item: {
        type: 'conversation',
        id: conversationId,
        created_at: createdAt,
        updated_at: createdAt,
        waiting_since: createdAt,
        snoozed_until: null,
        source: {
          type: 'conversation',
          id: partId,
          delivered_as: 'customer_initiated',
          subject: '',
          body: '<p>Hi, my parcel for order 4471 says delivered but it is not here.</p>',
          author,
          attachments: [],
          url: null,
          redacted: false,
        },
        contacts: { type: 'contact.list', contacts: [{ type: 'contact', id: contactId, external_id: null }] },
        teammates: { type: 'admin.list', admins: [] },
        title: null,
        admin_assignee_id: null,
        team_assignee_id: null,
        open: true,
        state: 'open',
        read: false,
        tags: { type: 'tag.list', tags: [] },
        priority: 'not_priority',
        conversation_parts: { type: 'conversation_part.list', conversation_parts: [], total_count: 0 },
      },
    },
    links: {},
    id: `notif_bench-${partId}`,
    topic: 'conversation.user.created',
    delivery_status: 'pending',
    delivery_attempts: 1,
    delivered_at: 0,
    first_sent_at: createdAt,
    created_at: createdAt,
    self: null,
  };
}

/**
 * `count` fresh deliveries from `desk`, numbered from `base` (ids unique per bench run, because
 * the ticket gate admits an event id once for good). Signed now, before any is timed.
 */
export function freshDeliveries(desk: InboundDeskName, count: number, base: number, secrets: BenchDeskSecrets, standin: DeskStandin): BenchDelivery[] {
  return Array.from({ length: count }, (_, i): BenchDelivery => {
    const n = base + i;
    if (desk === 'zendesk') {
      const { ticketId, commentId } = standin.createTicket({ requesterId: secrets.zendeskRequester, subject: 'Damaged mug', body: `My order 4471 arrived damaged (${n}).` });
      return { desk, ...standin.commentWebhook(ticketId, commentId) };
    }
    if (desk === 'intercom') {
      const body = Buffer.from(JSON.stringify(intercomCreated(String(n), String(n * 10), secrets.intercomContact, Math.floor(Date.now() / 1000))));
      return { desk, body, headers: { 'content-type': 'application/json', [INTERCOM_SIGNATURE_HEADER]: signIntercom(secrets.intercomClientSecret, body) } };
    }
    const hook = {
      casework_event: 'ticket.created',
      ticket_id: String(n),
      ticket_status: 'Open',
      ticket_requester_email: secrets.freshdeskEmail,
      ticket_description: `<div>My order 4471 arrived damaged (${n}).</div>`,
      ticket_latest_public_comment: '',
    };
    return {
      desk,
      body: Buffer.from(JSON.stringify({ freshdesk_webhook: hook })),
      headers: { 'content-type': 'application/json', [FRESHDESK_TOKEN_HEADER]: secrets.freshdeskToken },
    };
  });
}
