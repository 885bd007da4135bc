import { ActivityFailure, log, upsertSearchAttributes } from '@temporalio/workflow';
import type { DeskNote } from './desk-notes';
import { parseDeskTicketId } from '../schemas/desk-ticket';
import type { CaseState } from '../schemas/case-state';
import type { DeskOutbox, DeskPostItem, InvestigationInput } from '../schemas/investigation';
import { SA } from '../schemas/search-attributes';
import type { Run } from './state';

// The desk outbox: every reply the customer is given and every internal note for the team is
// numbered and queued in the workflow's state, then posted by the postToDesk activity, first
// queued first. The number (per kind) and the workflow id make the post's idempotency key, so a
// retried activity, a replayed history, a continue-as-new (the outbox is carried) or a recovered
// run (the carried state includes it) posts each one exactly once.

/** An outbox with nothing numbered yet. */
export function emptyOutbox(): DeskOutbox {
  return { replies: 0, notes: 0, pending: [], failed: [], posted: 0 };
}

/**
 * Decides, once at the start of a run, whether it posts to a desk: tickets from a desk webhook
 * always do; tickets from POST /events when the worker has the generic webhook (the first post
 * finds out: "skipped" ends the posting). A desk ticket's run shows the desk and its ticket id
 * as search attributes.
 */
export function startDeskPosts(run: Run, input: Pick<InvestigationInput, 'ticketId' | 'settings' | 'deskFrom'>): void {
  const ref = parseDeskTicketId(input.ticketId);
  // A ticket from POST /events posts whenever the worker has the generic webhook: the worker, which posts, decides.
  if (!ref) run.deskIfConfigured = true;
  run.postsToDesk = true;
  // A run over closed ones numbers its posts after theirs (a post's number is part of its key).
  if (input.deskFrom && !run.s.desk) run.s.desk = { ...emptyOutbox(), replies: input.deskFrom.replies, notes: input.deskFrom.notes };
  if (ref) {
    upsertSearchAttributes([
      { key: SA.desk, value: ref.desk },
      { key: SA.deskTicketId, value: ref.externalTicketId },
    ]);
  }
}

function enqueue(run: Run, item: Omit<DeskPostItem, 'sequence'>): void {
  if (!run.postsToDesk) return;
  const outbox = (run.s.desk ??= emptyOutbox());
  const sequence = item.kind === 'reply' ? ++outbox.replies : ++outbox.notes;
  outbox.pending.push({ ...item, sequence });
}

/** Queues a reply the customer sees (a public comment, an admin reply, a ticket reply), with the case state it leaves the ticket in, if any. */
export function queueReply(run: Run, text: string, status?: CaseState): void {
  enqueue(run, { kind: 'reply', body: text, ...(status ? { status } : {}) });
}

/** Queues an internal note only the team sees, with the tags and status it sets. */
export function queueNote(run: Run, note: DeskNote): void {
  enqueue(run, { kind: 'note', body: note.body, tags: note.tags, ...(note.status ? { status: note.status } : {}) });
}

/** True when posts wait in the outbox. */
export function hasPendingPosts(run: Run): boolean {
  return Boolean(run.postsToDesk && run.s.desk?.pending.length);
}

/** Puts posts a desk refused back in the queue (a person resumed the case, e.g. after fixing credentials). */
export function requeueRefused(run: Run): void {
  const outbox = run.s.desk;
  if (!outbox?.failed.length) return;
  outbox.pending.unshift(...outbox.failed.splice(0).map(({ error: _error, ...item }) => item));
}

/**
 * Posts everything queued, in order. Returns why, when the desk refused a post for good (401,
 * 403, 404, another 4xx, or unreachable past the outage budget): the refused post and every one
 * after it move to `failed`, kept word for word, and the caller hands the case to a person.
 */
export async function flushDeskPosts(run: Run): Promise<string | undefined> {
  const outbox = run.s.desk;
  if (!run.postsToDesk || !outbox) return undefined;
  for (let item = outbox.pending[0]; item; item = outbox.pending[0]) {
    try {
      const result = await run.acts.postToDesk({
        workflowId: run.id.workflowId,
        ticketId: run.id.ticketId,
        kind: item.kind,
        sequence: item.sequence,
        body: item.body,
        ...(item.tags ? { tags: item.tags } : {}),
        ...(item.status ? { status: item.status } : {}),
      });
      if (result.outcome === 'skipped' && run.deskIfConfigured) {
        // The worker has no generic webhook: this run keeps its replies in its status only, as runs without a desk always have.
        run.postsToDesk = false;
        delete run.s.desk;
        return undefined;
      }
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      const why = error.cause instanceof Error ? error.cause.message : error.message;
      log.error('the desk refused a post; the case needs a person', { kind: item.kind, sequence: item.sequence, error: why });
      outbox.failed.push(...outbox.pending.splice(0).map((p) => ({ ...p, error: why })));
      return `casework could not post ${item.kind} ${item.sequence} to the desk ticket: ${why}`;
    }
    outbox.pending.shift();
    outbox.posted += 1;
  }
  return undefined;
}
