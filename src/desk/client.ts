import { createHash } from 'node:crypto';
import type { PostStatus } from '../schemas/case-state';
import type { RequesterTicketReader } from './requester-tickets';
import type { DeskName } from './types';
import { decodeEntities } from './html-entities';

// The outbound port: what casework asks of a desk, whichever desk it is. One call per reply or
// note; the adapter makes it exactly once on the desk, whatever retries happen around it.

/** What a post is: a reply the customer sees, or an internal note only the team sees. */
export type DeskPostKind = 'reply' | 'note';

/** The case state a post tells the desk, in casework's words (src/schemas/case-state.ts); each adapter maps it through its desk's table (lifecycle.ts). */
export type DeskStatus = PostStatus;

/** One reply or note to put on a desk ticket. JSON-safe: it is the postToDesk activity's input too. */
export interface DeskPost {
  /** The investigation's workflow id; with kind and sequence it makes the idempotency key. */
  workflowId: string;
  /** The desk's ticket (Zendesk, Freshdesk) or conversation (Intercom) id; casework's own ticket id for the generic webhook. */
  externalTicketId: string;
  kind: DeskPostKind;
  /** The reply's (or note's) number within the investigation: 1, 2, 3… Stable across retries and replays. */
  sequence: number;
  /** Plain text; adapters format it for their desk. */
  body: string;
  /** Tags to add, where the desk supports them. */
  tags?: string[];
  /** The case state to set with the post; the adapter sets its desk's status for it. */
  status?: DeskStatus;
}

/** What happened: posted now, or found already on the ticket from an earlier attempt. */
export interface DeskPostResult {
  outcome: 'posted' | 'already_posted';
  idempotencyKey: string;
}

/** A desk casework can post replies and notes to. Errors are src/desk/errors.ts kinds. */
export interface DeskClient {
  readonly desk: DeskName;
  post(post: DeskPost): Promise<DeskPostResult>;
  /** The current ticket's requester's other tickets (requester-tickets.ts); absent on a desk that keeps none casework can read (the generic webhook). */
  requesterTickets?: RequesterTicketReader['requesterTickets'];
}

/**
 * The idempotency key of a post: a hash of workflow id, kind and number, so the same reply gets
 * the same key on every retry and replay, and another reply never does. Lower-case hex, so every
 * desk keeps it as written (Zendesk lower-cases tags).
 */
export function idempotencyKey(post: Pick<DeskPost, 'workflowId' | 'kind' | 'sequence'>): string {
  return 'cw' + createHash('sha256').update(`${post.workflowId}\n${post.kind}\n${post.sequence}`).digest('hex').slice(0, 24);
}

/** The line that carries the key in internal notes on desks without tags or metadata for it (Intercom, Freshdesk); never in a public reply. */
export function markerLine(key: string): string {
  return `ref: ${key}`;
}

/** Plain text as minimal HTML (Intercom and Freshdesk take HTML bodies). */
export function toHtml(text: string): string {
  const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return text
    .split(/\n{2,}/)
    .map((para) => `<p>${escape(para).replace(/\n/g, '<br>')}</p>`)
    .join('');
}

/** An HTML body as plain text with its paragraphs and line breaks kept (toHtml's inverse), for reading what a customer wrote. */
export function fromHtml(html: string): string {
  return decodeEntities(
    html
      .replace(/<br\s*\/?>/gi, '\n')
      .replace(/<\/p>\s*|<\/div>\s*/gi, '\n\n')
      .replace(/<[^>]*>/g, ''),
  )
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
