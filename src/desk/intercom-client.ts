import { caseStateOf } from '../schemas/case-state';
import { idempotencyKey, markerLine, toHtml, type DeskClient, type DeskPost, type DeskPostResult } from './client';
import { deskFetch } from './http';
import { INTERCOM_LIFECYCLE, type IntercomState, type StatusTable } from './lifecycle';
import { readBack, replyMarkerNote, type ThreadEntry } from './read-back';

// Intercom Conversations API (developers.intercom.com/docs/references/rest-api/api.intercom.io/
// conversations/replyconversation, .../manageconversation): POST /conversations/{id}/reply with
// {message_type: "comment" | "note", type: "admin", admin_id, body}; a note is internal. The
// state and the assignee change through "Manage a conversation", POST /conversations/{id}/parts
// {message_type: "close" | "open" | "snoozed" (with snoozed_until) | "assignment" (with assignee_id),
// type: "admin", admin_id}.
//
// Intercom has no idempotency key for replies and no private field on one, so the key lives in
// internal notes only (read-back.ts): a note ends with "ref: <key>"; a reply is announced by a
// note carrying its key, then posted without one. Before posting casework reads the conversation
// (GET /conversations/{id}, which returns its parts, up to Intercom's limit of 500).

/** What the Intercom client needs. */
export interface IntercomClientConfig {
  baseUrl: string;
  accessToken: string;
  /** The admin casework replies as. */
  adminId: string;
  timeoutMs: number;
  fetch?: typeof fetch;
  /** State per case state; INTERCOM_LIFECYCLE by default. */
  states?: StatusTable<IntercomState>;
  /** How long a snoozed conversation sleeps, in seconds (it wakes sooner when the customer replies). */
  snoozeSeconds?: number;
  /** The admin a case handed to a person is assigned to; unset, the assignment stays as it is. */
  handOffAdminId?: string;
  now?: () => Date;
}

interface IntercomPart {
  part_type?: string;
  body?: string | null;
  author?: { type?: string; id?: string | number };
}

/** A DeskClient for Intercom. */
export function createIntercomClient(config: IntercomClientConfig): DeskClient {
  const base = config.baseUrl.replace(/\/$/, '');
  const states = config.states ?? INTERCOM_LIFECYCLE;
  const now = config.now ?? (() => new Date());
  const headers = { authorization: `Bearer ${config.accessToken}`, 'intercom-version': '2.11' };
  const call = (method: 'GET' | 'POST', path: string, what: string, body?: unknown) =>
    deskFetch('intercom', { method, url: `${base}${path}`, headers, body, what, timeoutMs: config.timeoutMs }, config.fetch);
  const admin = { type: 'admin', admin_id: config.adminId };

  return {
    desk: 'intercom',
    async post(post: DeskPost): Promise<DeskPostResult> {
      const key = idempotencyKey(post);
      const id = encodeURIComponent(post.externalTicketId);
      const what = `posting ${post.kind} ${post.sequence} to conversation ${post.externalTicketId}`;
      const conversation = (await call('GET', `/conversations/${id}`, `checking conversation ${post.externalTicketId} before ${what}`)) as
        { state?: string; conversation_parts?: { conversation_parts?: IntercomPart[] } } | undefined;
      const entries: ThreadEntry[] = (conversation?.conversation_parts?.conversation_parts ?? []).map((part) => ({
        body: part.body ?? '',
        byCasework: part.author?.type === 'admin' && String(part.author.id) === config.adminId,
        isPublic: part.part_type === 'comment',
      }));
      const found = readBack(entries, post.kind, key, post.body);
      if (found === 'posted') return { outcome: 'already_posted', idempotencyKey: key };
      const reply = (messageType: 'comment' | 'note', text: string) =>
        call('POST', `/conversations/${id}/reply`, what, { message_type: messageType, ...admin, body: toHtml(text) });
      if (post.kind === 'note') await reply('note', `${post.body}\n\n${markerLine(key)}`);
      else {
        if (found === 'absent') await reply('note', replyMarkerNote(post.sequence, key));
        await reply('comment', post.body);
      }
      if (post.status) {
        const state = caseStateOf(post.status);
        const target = states[state];
        const manage = (body: Record<string, unknown>, doing: string) =>
          call('POST', `/conversations/${id}/parts`, `${doing} conversation ${post.externalTicketId}`, { ...body, ...admin });
        // Each change is harmless to repeat (closing a closed conversation, assigning to the same admin), so none needs a key of its own.
        if (state === 'with_person' && config.handOffAdminId) await manage({ message_type: 'assignment', assignee_id: config.handOffAdminId }, 'assigning');
        if (target === 'closed') await manage({ message_type: 'close' }, 'closing');
        else if (target === 'snoozed') await manage({ message_type: 'snoozed', snoozed_until: Math.floor(now().getTime() / 1000) + (config.snoozeSeconds ?? 86_400) }, 'snoozing');
        else if (conversation?.state !== 'open') await manage({ message_type: 'open' }, 'opening');
      }
      return { outcome: 'posted', idempotencyKey: key };
    },
  };
}
