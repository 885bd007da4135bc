import { idempotencyKey, type DeskClient, type DeskPost, type DeskPostResult, type DeskStatus } from './client';
import { basicAuth, deskFetch } from './http';

// Zendesk Tickets API (developer.zendesk.com/api-reference/ticketing/tickets/tickets,
// .../ticket_comments): a comment is added by updating the ticket,
// PUT /api/v2/tickets/{id} {ticket: {comment: {body, public}}}; public:false is an internal note.
//
// Exactly once: the same update adds the tag "casework_<key>" (additional_tags adds without
// replacing the ticket's tags). Comment and tag land in one ticket update, atomically, so
// before posting casework reads the ticket: the tag there means an earlier attempt was applied
// (perhaps one whose answer timed out), and nothing is posted again. Customers never see tags.

/** What the Zendesk client needs. Credentials are held here and sent only in the Authorization header. */
export interface ZendeskClientConfig {
  /** https://<subdomain>.zendesk.com (or the stand-in's URL). */
  baseUrl: string;
  email: string;
  apiToken: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

const STATUS: Record<DeskStatus, string> = { open: 'open', pending: 'pending', solved: 'solved' };

/** The tag that marks a post as done on a Zendesk ticket. */
export function zendeskMarkerTag(key: string): string {
  return `casework_${key}`;
}

/** A DeskClient for Zendesk. */
export function createZendeskClient(config: ZendeskClientConfig): DeskClient {
  const base = config.baseUrl.replace(/\/$/, '');
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
      if (post.status) ticket.status = STATUS[post.status];
      await call('PUT', `/api/v2/tickets/${id}.json`, what, { ticket });
      return { outcome: 'posted', idempotencyKey: key };
    },
  };
}
