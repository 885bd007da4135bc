// The shape of an order's money ledger (migrations/024_order_ledger.sql): the types every layer
// shares, down here so the workflow's state can carry a snapshot. The rules are context/ledger.ts.

/** What a refund is for: a charge's reversal (duplicate or goods not received), or an amount off the order. */
export type RefundKind = 'duplicate_charge' | 'not_received' | 'goodwill' | 'partial';

/** Every refund kind, in the order the tools document them. */
export const REFUND_KINDS: readonly RefundKind[] = ['duplicate_charge', 'not_received', 'goodwill', 'partial'];

/** Kinds that reverse one charge (and so name it); the others name the order only. */
export const CHARGE_KINDS: readonly RefundKind[] = ['duplicate_charge', 'not_received'];

/** One captured charge. */
export interface LedgerCharge {
  charge_id: string;
  amount_cents: number;
  at: string;
}

/** One refund paid on the order: by casework on an approval, or reported by the processor. */
export interface LedgerRefund {
  refund_id: string;
  amount_cents: number;
  kind: RefundKind;
  /** The charge it reverses; null for an order-level refund (goodwill, partial, or a processor refund of unknown charge). */
  charge_id: string | null;
  at: string;
  /** The request it paid, for refunds casework issued. */
  request_id: string | null;
}

/** A request still waiting for its decision or its payment, in any case on the order. */
export interface LedgerPending {
  request_id: string;
  ticket_id: string;
  amount_cents: number;
  kind: RefundKind;
  charge_id: string | null;
  status: 'awaiting_approval' | 'approved';
}

/** An order's ledger at one moment. */
export interface OrderLedger {
  order_id: string;
  currency: string;
  /** The order's total: what the goods (and delivery) cost. */
  total_cents: number;
  charges: LedgerCharge[];
  refunds: LedgerRefund[];
  pending: LedgerPending[];
}

/** A refund someone asks to pay: what the bounds are checked against. */
export interface RefundAsk {
  request_id?: string;
  amount_cents: number;
  kind: RefundKind;
  charge_id: string | null;
}
