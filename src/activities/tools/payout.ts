import type { Pool } from 'pg';
import { IdempotencyMismatchError, RefundRefusedError, CASEWORK_REFUND_KEY, type PaymentProvider, type ProviderPayments, type RefundReason } from '../../commerce/payment-provider';
import { withCustomer } from '../../db/pool';
import { recordPayoutAnswer, recordPayoutRefusal, type PayoutRow } from '../../db/payouts';
import type { RefundKind } from '../../context/ledger';
import { ToolError } from '../../schemas/tool-call';
import { chargeCode } from './payments';
import { CAPTURED_CHARGE } from './codes';

// Paying a reserved refund through the payment provider, exactly once. The reservation (the
// refunds row, under the order's lock) has recorded the payout as 'sending' with its charge,
// reason and idempotency key; every attempt sends that very request, so a retried activity, a
// killed worker's successor or a replay after a lost answer gets the provider's first refund
// back rather than a second one. The answer is recorded once; a payout already answered is not
// sent again (a provider keeps keys for a day, casework's trail for good).

/** The idempotency key of an approval's refund: derived from the approval, never random. */
export function payoutKey(approvalId: string): string {
  return `casework-${approvalId}`;
}

/** The provider's reason for a refund of this kind. */
export function payoutReason(kind: RefundKind): RefundReason {
  return kind === 'duplicate_charge' ? 'duplicate' : 'requested_by_customer';
}

/**
 * The charge a refund is paid against: the one the request reverses, or for an order-level
 * refund the oldest captured charge with enough left unrefunded, as the provider reports it less
 * the payouts casework has asked for on it and not yet had answered (`sending`). Undefined when
 * no one charge can carry it.
 */
export function payoutCharge(
  request: { charge_id: string | null; amount_cents: number },
  report: ProviderPayments,
  sending: readonly { charge_id: string; amount_cents: number }[],
): string | undefined {
  if (request.charge_id) return request.charge_id;
  const asked = (chargeId: string) => sending.filter((p) => p.charge_id === chargeId).reduce((n, p) => n + p.amount_cents, 0);
  return report.charges.find((c) => chargeCode(c) === CAPTURED_CHARGE && c.amountCents - c.refundedCents - asked(c.id) >= request.amount_cents)?.id;
}

/** What a payout attaches to the provider's refund: how it is traced back to casework (and counted once). */
export function payoutMetadata(refund: { refund_id: string; order_id: string }, approvalId: string): Record<string, string> {
  return { [CASEWORK_REFUND_KEY]: refund.refund_id, casework_approval_id: approvalId, order_id: refund.order_id };
}

/** The words a person and the workflow read when the provider refused a refund. */
export function providerRefusal(requestId: string, words: string): string {
  return `The payment provider refused refund request ${requestId}: ${words}. Nothing was paid; a person must look at it.`;
}

/**
 * Sends the payout's request to the provider (again, after a lost answer: same key, same
 * parameters) and records the answer. A refusal is recorded and becomes a ToolError (a person
 * reads it; never retried); an outage is thrown, so the activity retries with the same key.
 */
export async function sendPayout(
  deps: { pool: Pool; payments: PaymentProvider },
  customerId: string,
  refund: { refund_id: string; order_id: string; request_id: string; amount_cents: number },
  payout: PayoutRow,
  approvalId: string,
): Promise<void> {
  if (payout.status !== 'sending') return;
  let answer;
  try {
    answer = await deps.payments.refund({
      customerId,
      chargeId: payout.charge_id,
      amountCents: refund.amount_cents,
      reason: payout.reason,
      idempotencyKey: payout.idempotency_key,
      metadata: payoutMetadata(refund, approvalId),
    });
  } catch (error) {
    if (error instanceof RefundRefusedError || error instanceof IdempotencyMismatchError) {
      const words = error.message;
      await withCustomer(deps.pool, customerId, async (client) => {
        await recordPayoutRefusal(client, refund.refund_id, words);
        await client.query(`UPDATE refund_requests SET status = 'refused' WHERE customer_id = $1 AND request_id = $2 AND status = 'refunded'`, [customerId, refund.request_id]);
      });
      throw new ToolError(providerRefusal(refund.request_id, words));
    }
    throw error;
  }
  await withCustomer(deps.pool, customerId, (client) => recordPayoutAnswer(client, refund.refund_id, answer));
}
