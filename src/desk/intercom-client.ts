import { idempotencyKey, markerLine, toHtml, type DeskClient, type DeskPost, type DeskPostResult } from './client';
import { deskFetch } from './http';

// Intercom Conversations API (developers.intercom.com/docs/references/rest-api/api.intercom.io/
// conversations/replyconversation): POST /conversations/{id}/reply with
// {message_type: "comment" | "note", type: "admin", admin_id, body}; a note is internal.
// Closing: POST /conversations/{id}/parts {message_type: "close", type: "admin", admin_id}.
//
// Intercom has no idempotency key for replies, so the key lives in the text: each post ends
// with the line "ref: <key>", and before posting casework reads the conversation
// (GET /conversations/{id}) and posts nothing if a part already carries it.

/** What the Intercom client needs. */
export interface IntercomClientConfig {
  baseUrl: string;
  accessToken: string;
  /** The admin casework replies as. */
  adminId: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

/** A DeskClient for Intercom. */
export function createIntercomClient(config: IntercomClientConfig): DeskClient {
  const base = config.baseUrl.replace(/\/$/, '');
  const headers = { authorization: `Bearer ${config.accessToken}`, 'intercom-version': '2.11' };
  const call = (method: 'GET' | 'POST', path: string, what: string, body?: unknown) =>
    deskFetch('intercom', { method, url: `${base}${path}`, headers, body, what, timeoutMs: config.timeoutMs }, config.fetch);

  return {
    desk: 'intercom',
    async post(post: DeskPost): Promise<DeskPostResult> {
      const key = idempotencyKey(post);
      const id = encodeURIComponent(post.externalTicketId);
      const what = `posting ${post.kind} ${post.sequence} to conversation ${post.externalTicketId}`;
      const conversation = (await call('GET', `/conversations/${id}`, `checking conversation ${post.externalTicketId} before ${what}`)) as
        { conversation_parts?: { conversation_parts?: { body?: string | null }[] } } | undefined;
      const parts = conversation?.conversation_parts?.conversation_parts ?? [];
      if (parts.some((part) => part.body?.includes(key))) return { outcome: 'already_posted', idempotencyKey: key };
      await call('POST', `/conversations/${id}/reply`, what, {
        message_type: post.kind === 'reply' ? 'comment' : 'note',
        type: 'admin',
        admin_id: config.adminId,
        body: toHtml(`${post.body}\n\n${markerLine(key)}`),
      });
      // Closing twice is harmless, so the status change needs no key of its own.
      if (post.status === 'solved') {
        await call('POST', `/conversations/${id}/parts`, `closing conversation ${post.externalTicketId}`, { message_type: 'close', type: 'admin', admin_id: config.adminId });
      }
      return { outcome: 'posted', idempotencyKey: key };
    },
  };
}
