import { caseStateOf } from '../schemas/case-state';
import { idempotencyKey, type DeskClient, type DeskPost, type DeskPostResult } from './client';
import { basicAuth, deskFetch } from './http';
import { ZENDESK_LIFECYCLE, type StatusTable, type ZendeskStatus } from './lifecycle';

// Zendesk Tickets API (developer.zendesk.com/api-reference/ticketing/tickets/tickets,
// .../ticket_comments): a comment is added by updating the ticket,
// PUT /api/v2/tickets/{id} {ticket: {comment: {body, public}}}; public:false is an internal note.
//
// Exactly once: the same update adds the tag "casework_<key>" (additional_tags adds without
// replacing the ticket's tags). Comment and tag land in one ticket update, atomically, so
// before posting casework reads the ticket: the tag there means an earlier attempt was applied
// (perhaps one whose answer timed out), and nothing is posted again. Customers never see tags.
// The same update sets the status the case state maps to (lifecycle.ts) and, for a case handed
// to a person, the group configured to take it.

/** What the Zendesk client needs. Credentials are held here and sent only in the Authorization header. */
export interface ZendeskClientConfig {
  /** https://<subdomain>.zendesk.com (or the stand-in's URL). */
  baseUrl: string;
  email: string;
  apiToken: string;
  timeoutMs: number;
  fetch?: typeof fetch;
  /** Status per case state; ZENDESK_LIFECYCLE by default. */
  statuses?: StatusTable<ZendeskStatus>;
  /** The group a case handed to a person is assigned to (ticket.group_id); unset, the assignment stays as it is. */
  handOffGroupId?: number;
}

/** The tag that marks a post as done on a Zendesk ticket. */
export function zendeskMarkerTag(key: string): string {
  return `casework_${key}`;
}

/** A DeskClient for Zendesk. */
export function createZendeskClient(config: ZendeskClientConfig): DeskClient {
  const base = config.baseUrl.replace(/\/$/, '');
  const statuses = config.statuses ?? ZENDESK_LIFECYCLE;
  const headers = { authorization: basicAuth(`${config.email}/token`, config.apiToken) };
  const call = (method: 'GET' | 'PUT', path: string, what: string, body?: unknown) =>
    deskFetch('zendesk', { method, url: `${base}${path}`, headers, body, what, timeoutMs: config.timeoutMs }, config.fetch);

  return {
    desk: 'zendesk',
    async post(post: DeskPost): Promise<DeskPostResult> {
      const key = idempotencyKey(post);
      const tag = zendeskMarkerTag(key);
      const id = encodeURIComponent(post.externalTicketId);
      const what = `posting ${post.kind} ${post.sequence} to ticket ${post.externalTicketId}`;
      const current = (await call('GET', `/api/v2/tickets/${id}.json`, `checking ticket ${post.externalTicketId} before ${what}`)) as { ticket?: { tags?: string[] } } | undefined;
      if (current?.ticket?.tags?.includes(tag)) return { outcome: 'already_posted', idempotencyKey: key };
      const ticket: Record<string, unknown> = {
        comment: { body: post.body, public: post.kind === 'reply' },
        additional_tags: [tag, ...(post.tags ?? [])],
      };
      if (post.status) {
        const state = caseStateOf(post.status);
        ticket.status = statuses[state];
        if (state === 'with_person' && config.handOffGroupId !== undefined) ticket.group_id = config.handOffGroupId;
      }
      await call('PUT', `/api/v2/tickets/${id}.json`, what, { ticket });
      return { outcome: 'posted', idempotencyKey: key };
    },
  };
}
