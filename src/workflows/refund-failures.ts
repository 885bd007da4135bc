import { log, setHandler } from '@temporalio/workflow';
import { formatMoney } from '../context/money';
import { appendUserText } from '../context/replies';
import type { CarriedState, FailedRefund } from '../schemas/investigation';
import { needsHumanNote } from './desk-notes';
import { queueNote } from './desk-posts';
import { handOff } from './hand-off';
import { refundFailedSignal } from './investigation-api';
import { publish, type Run } from './state';

// A refund the payment provider accepted can fail days later (a closed card, a bank's refusal):
// the provider's webhook tells the server, which signals the case that paid it. The failure is
// recorded on the case, the model is told (so it never says the money is on its way), and the
// case goes to a person: the customer gets the holding reply, the team an internal note. A case
// that has closed is reopened by a run of its own, which does the same.

/**
 * From this patch on, a run started by a refund failure alone (a closed case reopened by the
 * provider's webhook, client/refund-failures.ts) goes straight to a person instead of waiting
 * for the customer's words.
 */
export const REFUND_FAILURE_REOPENS_PATCH = 'refund-failure-reopens';

/** Records a reported failure once per refund and state (the server also acts on each event once). */
export function installRefundFailureHandler(run: Run): void {
  setHandler(refundFailedSignal, (failure: FailedRefund) => {
    const s = run.s;
    if ((s.failedRefunds ?? []).some((f) => f.refund_id === failure.refund_id && f.status === failure.status)) return;
    (s.failedRefunds ??= []).push({ ...failure, handed_over: false });
    log.warn('the payment provider reports a refund failed', { refundId: failure.refund_id, status: failure.status });
    publish(run.id, s);
  });
}

/** True while a reported failure waits to be handed to a person. */
export function hasUnreportedFailure(s: Pick<CarriedState, 'failedRefunds'>): boolean {
  return (s.failedRefunds ?? []).some((f) => !f.handed_over);
}

/** The failure in words for a person (the desk note, the status). */
function words(f: FailedRefund, amount: string | undefined): string {
  return (
    `the payment provider (${f.provider}) reports that refund ${f.refund_id}${amount ? ` of ${amount}` : ''} on order ${f.order_id} (request ${f.request_id}) ` +
    `${f.status === 'canceled' ? 'was canceled' : 'failed'}${f.reason ? ` (${f.reason})` : ''}: nothing reached the customer. Decide how to pay it back, and tell the customer.`
  );
}

/** Hands the case to a person for every reported failure not yet handed over; true when it did. */
export function handOverFailedRefunds(run: Run): boolean {
  const s = run.s;
  const due = (s.failedRefunds ?? []).filter((f) => !f.handed_over);
  if (!due.length) return false;
  for (const f of due) {
    f.handed_over = true;
    const paid = s.refunds.find((r) => r.refund_id === f.refund_id);
    const amount = paid?.currency ? formatMoney(paid.amount_cents, paid.currency) : undefined;
    const reason = words(f, amount);
    appendUserText(s.transcript, [
      {
        type: 'text',
        text: `(casework: the payment provider reports that refund ${f.refund_id} on order ${f.order_id} did not go through, so the customer has not been refunded. A colleague is taking the case over; never tell the customer a refund is on its way.)`,
      },
    ]);
    // A case a person already holds is not given a second holding reply: the team gets the note.
    if (s.awaiting === 'person') queueNote(run, needsHumanNote({ workflowId: run.id.workflowId, reason: `also, ${reason}` }));
    else handOff(run, 'refund_failed', reason);
  }
  publish(run.id, s);
  return true;
}
