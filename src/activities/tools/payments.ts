import type { Pool, PoolClient } from 'pg';
import { z } from 'zod';
import { CASEWORK_REFUND_KEY, type ProviderCharge, type ProviderPayments, type ProviderRefund } from '../../commerce/payment-provider';
import type { Commerce, ShopOrder } from '../../commerce/shop';
import { CAPTURED_CHARGE, COUNTED_REFUND_CODES, PAYMENT_METHOD_CODES, PAYMENT_STATUS_CODES, describeCode } from './codes';
import { defineTool } from './define';
import { requireOrder } from './orders';
import { withCustomer } from '../../db/pool';
import { isoTimestamp } from '../../db/rows';
import { pendingRequests } from '../../db/ledger';
import { payoutsOfOrder, UNPAID_PAYOUT_STATUSES } from '../../db/payouts';
import { recordProviderReport } from '../../db/provider-report';

/** Most charges (and, separately, refunds) listed; totals always count every one. */
export const MAX_PAYMENTS_SHOWN = 10;

/** How a refund casework issued reads until the processor reports it settled. */
export const ISSUED_REFUND_STATUS = 'issued by casework after a recorded approval (settling with the processor)';
/** How a refund casework asked for reads when the payment provider refused it. */
export const REFUSED_REFUND_STATUS = 'refused by the payment provider: nothing was paid';

const IssuedRefundRow = z.object({ refund_id: z.string(), amount_cents: z.number().int(), issued_at: isoTimestamp, charge_id: z.string().nullable() });

/** A charge's state in the processor's neutral code: the adapter's own, or read from the port's status. */
export function chargeCode(charge: ProviderCharge): string {
  return charge.statusCode ?? (charge.status === 'captured' ? CAPTURED_CHARGE : charge.status === 'pending' ? 'ATH' : 'DCL');
}

/** A refund's state in the processor's neutral code: the adapter's own, or read from the port's status. */
export function refundCode(refund: ProviderRefund): string {
  if (refund.statusCode) return refund.statusCode;
  return refund.status === 'succeeded' ? 'RFS' : refund.status === 'pending' || refund.status === 'requires_action' ? 'RFP' : 'RFF';
}

/** get_payments' result. */
export interface PaymentsResult {
  order_id: string;
  /** The order's currency: every amount is in its minor unit. */
  currency: string;
  charges: { charge_id: string; amount_cents: number; at: string; status: string; method: string }[];
  /** charge_id: the charge a casework refund reversed (absent: the order). */
  refunds: { amount_cents: number; at: string; status: string; charge_id?: string }[];
  showing?: string;
  charged_cents: number;
  refunded_cents: number;
  refundable_cents: number;
  possible_duplicate_charge: boolean;
  /** Refund requests on the order still waiting for a decision or payment, in any case (only when there are some). */
  pending_requests?: { request_id: string; ticket_id: string; amount_cents: number; kind: string; charge_id: string | null }[];
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/** True when two captured charges have the same amount: the signature of a retried checkout. */
export function hasDuplicateCharge(capturedAmounts: number[]): boolean {
  return new Set(capturedAmounts).size < capturedAmounts.length;
}

/**
 * An order's charges and refunds with what can still be refunded: the payment provider's report
 * and the refunds casework issued (its trail). A provider refund carrying a casework refund id
 * (its metadata, or its own id as the shop's records name it) is that same refund, counted once;
 * a casework refund the provider refused or failed returned nothing and does not count.
 */
export async function readPayments(client: PoolClient, customerId: string, order: ShopOrder, report: ProviderPayments): Promise<PaymentsResult> {
  const orderId = order.orderId;
  const issued = (
    await client.query('SELECT refund_id, amount_cents, issued_at, charge_id FROM refunds WHERE customer_id = $1 AND order_id = $2 ORDER BY issued_at, refund_id', [
      customerId,
      orderId,
    ])
  ).rows.map((row) => IssuedRefundRow.parse(row));
  const payouts = new Map((await payoutsOfOrder(client, customerId, orderId)).map((p) => [p.refund_id, p]));

  const charges = report.charges;
  const caseworks = new Set([...issued.map((r) => r.refund_id), ...[...payouts.values()].flatMap((p) => (p.provider_refund_id ? [p.provider_refund_id] : []))]);
  const processorRefunds = report.refunds.filter((r) => !caseworks.has(r.id) && !caseworks.has(r.metadata[CASEWORK_REFUND_KEY] ?? ''));
  const captured = charges.filter((c) => chargeCode(c) === CAPTURED_CHARGE).map((c) => c.amountCents);
  const counted = processorRefunds.filter((r) => COUNTED_REFUND_CODES.includes(refundCode(r))).map((r) => r.amountCents);
  const unpaid = (refundId: string) => UNPAID_PAYOUT_STATUSES.includes(payouts.get(refundId)?.status ?? '');
  const issuedStatus = (refundId: string) => {
    const status = payouts.get(refundId)?.status;
    if (status === 'refused') return REFUSED_REFUND_STATUS;
    if (status === 'failed' || status === 'canceled') return describeCode(PAYMENT_STATUS_CODES, 'RFF');
    return ISSUED_REFUND_STATUS;
  };

  const charged = sum(captured);
  const refunded = sum(counted) + sum(issued.filter((r) => !unpaid(r.refund_id)).map((r) => r.amount_cents));
  const refunds = [
    ...processorRefunds.map((r) => ({ amount_cents: r.amountCents, at: r.createdAt, status: describeCode(PAYMENT_STATUS_CODES, refundCode(r)) })),
    ...issued.map((r) => ({ amount_cents: r.amount_cents, at: r.issued_at, status: issuedStatus(r.refund_id), ...(r.charge_id ? { charge_id: r.charge_id } : {}) })),
  ].sort((a, b) => a.at.localeCompare(b.at));
  const cut = charges.length > MAX_PAYMENTS_SHOWN || refunds.length > MAX_PAYMENTS_SHOWN;
  const pending = await pendingRequests(client, customerId, orderId);

  return {
    order_id: orderId,
    currency: order.currency,
    charges: charges.slice(0, MAX_PAYMENTS_SHOWN).map((c) => ({
      charge_id: c.id,
      amount_cents: c.amountCents,
      at: c.createdAt,
      status: describeCode(PAYMENT_STATUS_CODES, chargeCode(c)),
      method: describeCode(PAYMENT_METHOD_CODES, c.methodCode),
    })),
    refunds: refunds.slice(0, MAX_PAYMENTS_SHOWN),
    ...(cut ? { showing: `the first ${MAX_PAYMENTS_SHOWN} of ${charges.length} charges and ${refunds.length} refunds, oldest first; the totals count them all` } : {}),
    charged_cents: charged,
    refunded_cents: refunded,
    refundable_cents: Math.max(0, charged - refunded),
    possible_duplicate_charge: hasDuplicateCharge(captured),
    ...(pending.length
      ? {
          pending_requests: pending
            .slice(0, MAX_PAYMENTS_SHOWN)
            .map((p) => ({ request_id: p.request_id, ticket_id: p.ticket_id, amount_cents: p.amount_cents, kind: p.kind, charge_id: p.charge_id })),
        }
      : {}),
  };
}

/** The order (a ToolError when it is not the customer's) and what the payment provider reports of it now. */
export async function readProviderView(
  commerce: Pick<Commerce, 'orders' | 'payments'>,
  customerId: string,
  orderId: string,
): Promise<{ order: ShopOrder; report: ProviderPayments }> {
  const order = await requireOrder(commerce.orders, customerId, orderId);
  return { order, report: await commerce.payments.paymentsOf(customerId, orderId) };
}

/** get_payments: the provider's report, recorded for the ledger, shaped with casework's own refunds. */
export function createPaymentTools(deps: { pool: Pool; commerce: Commerce }) {
  return {
    get_payments: defineTool('get_payments', async ({ order_id }, context) => {
      const { order, report } = await readProviderView(deps.commerce, context.customerId, order_id);
      return withCustomer(deps.pool, context.customerId, async (client) => {
        await recordProviderReport(client, context.customerId, order_id, deps.commerce.payments.name, report);
        return readPayments(client, context.customerId, order, report);
      });
    }),
  };
}
