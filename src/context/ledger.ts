import { formatMoney } from './money';
import type { LedgerPending, OrderLedger, RefundAsk, RefundKind } from '../schemas/ledger';

// An order's money ledger as every reader sees it: what was captured (per charge), what was
// refunded (per refund, with the charge it reverses), and what other cases have asked for and
// is still pending. Pure: the workflow's update validator checks an approval against the
// snapshot it holds with `ledgerProblem`; the refund tools check the live ledger with the same
// function under the order's lock, and the database trigger (migrations/024_order_ledger.sql)
// enforces the same bounds whatever the caller.

export { CHARGE_KINDS, REFUND_KINDS } from '../schemas/ledger';
export type { LedgerCharge, LedgerPending, LedgerRefund, OrderLedger, RefundAsk, RefundKind } from '../schemas/ledger';

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** Money captured on the order. */
export const capturedOf = (ledger: OrderLedger) => sum(ledger.charges.map((c) => c.amount_cents));
/** Money refunded on the order, by every refund. */
export const refundedOf = (ledger: OrderLedger) => sum(ledger.refunds.map((r) => r.amount_cents));
/** What can still be refunded on the order. */
export const remainingOf = (ledger: OrderLedger) => Math.max(0, capturedOf(ledger) - refundedOf(ledger));
/** What was captured beyond the order's total: the most duplicate-charge refunds may return. */
export const overCaptureOf = (ledger: OrderLedger) => Math.max(0, capturedOf(ledger) - ledger.total_cents);
/** What was paid for the goods: the most not-received refunds may return. */
export const paidForGoodsOf = (ledger: OrderLedger) => Math.min(ledger.total_cents, capturedOf(ledger));

const refundedOfKind = (ledger: OrderLedger, kind: RefundKind) => sum(ledger.refunds.filter((r) => r.kind === kind).map((r) => r.amount_cents));

function chargesInWords(ledger: OrderLedger): string {
  const n = ledger.charges.length;
  const count = n === 1 ? 'one charge' : n === 2 ? 'two charges' : `${n} charges`;
  return `order ${ledger.order_id} was captured ${formatMoney(capturedOf(ledger), ledger.currency)} in ${count}`;
}

/** The words every refusal starts with, so a caller (the workflow) can tell a ledger refusal from any other error. */
export const LEDGER_REFUSAL = 'Refused by the order ledger: ';

/**
 * Why the ledger cannot honour this refund, in words a person understands, or null when it
 * can: the order's refunds never exceed what was captured, duplicate-charge refunds never the
 * over-capture, not-received refunds never what was paid for the goods, and a charge is
 * reversed at most once. Pending requests do not count: they have not paid anything.
 */
export function ledgerProblem(ledger: OrderLedger, ask: RefundAsk): string | null {
  const m = (cents: number) => formatMoney(cents, ledger.currency);
  const captured = capturedOf(ledger);
  const refunded = refundedOf(ledger);
  const head = chargesInWords(ledger);
  if (ask.charge_id !== null) {
    const charge = ledger.charges.find((c) => c.charge_id === ask.charge_id);
    if (!charge) return `${head}; charge ${ask.charge_id} is not one of them, so this request cannot reverse it`;
    const earlier = ledger.refunds.find((r) => r.charge_id === ask.charge_id && r.request_id !== ask.request_id);
    if (earlier) return `${head}; ${m(earlier.amount_cents)} is already refunded for charge ${charge.charge_id}; this request would refund that charge again`;
    if (ask.amount_cents > charge.amount_cents)
      return `${head}; charge ${charge.charge_id} was ${m(charge.amount_cents)}, so this request of ${m(ask.amount_cents)} would refund more than it took`;
  }
  if (refunded + ask.amount_cents > captured) {
    return `${head}; ${m(refunded)} is already refunded, so at most ${m(Math.max(0, captured - refunded))} can still be refunded and this request is for ${m(ask.amount_cents)}`;
  }
  if (ask.kind === 'duplicate_charge') {
    const over = overCaptureOf(ledger);
    const done = refundedOfKind(ledger, 'duplicate_charge');
    if (done + ask.amount_cents > over) {
      return `${head} on an order of ${m(ledger.total_cents)}, so ${m(over)} was charged twice; ${m(done)} of it is already refunded as a duplicate charge, and this request of ${m(ask.amount_cents)} would refund more than the duplicate`;
    }
  }
  if (ask.kind === 'not_received') {
    const paid = paidForGoodsOf(ledger);
    const done = refundedOfKind(ledger, 'not_received');
    if (done + ask.amount_cents > paid) {
      return `${head}; ${m(paid)} was paid for the goods and ${m(done)} of it is already refunded as not received, so this request of ${m(ask.amount_cents)} would refund more than the goods cost`;
    }
  }
  return null;
}

/**
 * Other pending requests that may ask for the same money as `ask`: the same charge; more
 * duplicate than there is; or, on an order captured beyond its total, a request that names
 * only the order (it may well mean the duplicate another case asks for).
 */
export function overlappingRequests(ledger: OrderLedger, ask: RefundAsk): LedgerPending[] {
  const others = ledger.pending.filter((p) => p.request_id !== ask.request_id);
  return others.filter((p) => {
    if (ask.charge_id !== null && p.charge_id === ask.charge_id) return true;
    if (
      ask.kind === 'duplicate_charge' &&
      p.kind === 'duplicate_charge' &&
      refundedOfKind(ledger, 'duplicate_charge') + p.amount_cents + ask.amount_cents > overCaptureOf(ledger)
    ) {
      return true;
    }
    return (ask.charge_id === null || p.charge_id === null) && overCaptureOf(ledger) > 0;
  });
}

/** The ledger as a few lines for a person (CLI status, desk note): charges, refunds, other pending requests, what remains. */
export function describeLedger(ledger: OrderLedger, options: { except?: string } = {}): string[] {
  const m = (cents: number) => formatMoney(cents, ledger.currency);
  const lines = [
    `order ${ledger.order_id} (${ledger.currency}): total ${m(ledger.total_cents)}, captured ${m(capturedOf(ledger))}, refunded ${m(refundedOf(ledger))}, remaining ${m(remainingOf(ledger))}`,
  ];
  for (const c of ledger.charges) {
    const reversed = ledger.refunds.find((r) => r.charge_id === c.charge_id);
    lines.push(`  charge ${c.charge_id}: ${m(c.amount_cents)} at ${c.at}${reversed ? `, refunded ${m(reversed.amount_cents)} (${reversed.refund_id})` : ''}`);
  }
  for (const r of ledger.refunds) {
    lines.push(
      `  refund ${r.refund_id}: ${m(r.amount_cents)} ${r.kind.replace('_', ' ')}${r.charge_id ? ` of charge ${r.charge_id}` : ' on the order'}${r.request_id ? ` (request ${r.request_id})` : ''}`,
    );
  }
  for (const p of ledger.pending.filter((p) => p.request_id !== options.except)) {
    lines.push(
      `  pending in ticket ${p.ticket_id}: request ${p.request_id}, ${m(p.amount_cents)} ${p.kind.replace('_', ' ')}${p.charge_id ? ` of charge ${p.charge_id}` : ''} (${p.status.replace('_', ' ')})`,
    );
  }
  return lines;
}

/** What the model reads of the ledger: totals, the refunds, other cases' pending requests, and what remains. Small on purpose. */
export function ledgerSummary(ledger: OrderLedger, except?: string) {
  return {
    currency: ledger.currency,
    captured_cents: capturedOf(ledger),
    refunded_cents: refundedOf(ledger),
    remaining_cents: remainingOf(ledger),
    refunds: ledger.refunds.map((r) => ({ amount_cents: r.amount_cents, kind: r.kind, charge_id: r.charge_id })),
    pending_in_other_cases: ledger.pending
      .filter((p) => p.request_id !== except)
      .map((p) => ({ request_id: p.request_id, ticket_id: p.ticket_id, amount_cents: p.amount_cents, kind: p.kind, charge_id: p.charge_id })),
  };
}
