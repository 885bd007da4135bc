import { BadInputError, ConflictError, RefusedError, UnavailableError } from '../errors';

// The payment provider behind the commerce port: where an order's charges and refunds really
// live, and the only place money moves. Adapters (Stripe today, src/commerce/stripe.ts) speak the
// provider's API through its official SDK; tools shape what they return above this port, so the
// model sees the same lean results whichever provider a shop uses. Amounts are integer minor
// units with an ISO 4217 currency, as providers keep them.

/** A captured (or attempted) payment on an order. */
export interface ProviderCharge {
  id: string;
  orderId: string;
  amountCents: number;
  /** ISO 4217, upper case. */
  currency: string;
  status: 'captured' | 'pending' | 'failed';
  /** What the provider says is already refunded on it. */
  refundedCents: number;
  createdAt: string;
  /** The processor's own state in the neutral codes (PAYMENT_STATUS_CODES: ATH, CPT, VDD, DCL, CBK), where the adapter knows it; else read from `status`. */
  statusCode?: string;
  /** How it was paid, neutral (PAYMENT_METHOD_CODES: card_visa, paypal, …), where the adapter knows it. */
  methodCode?: string;
}

/** A refund the provider holds. */
export interface ProviderRefund {
  id: string;
  /** The charge it reverses; null where the provider's record names only the order. */
  chargeId: string | null;
  amountCents: number;
  currency: string;
  /** As the provider answers: `pending` may still fail (a bank can refuse it days later). */
  status: 'pending' | 'succeeded' | 'failed' | 'canceled' | 'requires_action';
  failureReason?: string;
  createdAt: string;
  /** What casework attached (its refund id, the approval): how a provider refund is traced back. */
  metadata: Record<string, string>;
  /** The processor's own state in the neutral codes (RFP, RFS, RFF), where the adapter knows it; else read from `status`. */
  statusCode?: string;
}

/** Why a refund is made, in the provider's words. */
export type RefundReason = 'duplicate' | 'fraudulent' | 'requested_by_customer';

/** One refund to make, exactly once. */
export interface RefundOrder {
  /** Whose refund it is: an adapter over casework's own tables reads under this customer's scope; others ignore it. */
  customerId: string;
  chargeId: string;
  amountCents: number;
  reason: RefundReason;
  /**
   * Derived from the approval (never random): every retry, a killed worker's successor and a
   * replayed history send the same key, so the provider makes one refund whatever happens.
   */
  idempotencyKey: string;
  metadata: Record<string, string>;
}

/** A refund event the provider sent (its webhook), after its signature was verified. */
export interface RefundEvent {
  eventId: string;
  type: 'refund.failed' | 'refund.updated' | 'refund.created';
  refund: ProviderRefund;
}

/** An order's charges and refunds as the provider reports them. */
export interface ProviderPayments {
  charges: ProviderCharge[];
  refunds: ProviderRefund[];
}

/** The metadata key casework puts its own refund id under: a provider refund carrying it is that same refund, counted once. */
export const CASEWORK_REFUND_KEY = 'casework_refund_id';

/** The provider port. */
export interface PaymentProvider {
  /** The provider's name, for logs and the refund trail. */
  readonly name: string;
  /** The order's charges and every refund on them, oldest first (the order is already known to be the customer's). */
  paymentsOf(customerId: string, orderId: string): Promise<ProviderPayments>;
  /** Makes the refund, or returns the one already made under the same idempotency key. */
  refund(order: RefundOrder): Promise<ProviderRefund>;
  /** Verifies a webhook delivery (raw bytes and signature header) and reads it; undefined for events casework does not act on. */
  readEvent(rawBody: Buffer, signatureHeader: string | undefined): RefundEvent | undefined;
}

/** The provider refused the refund for a reason a person must read (already refunded, more than is left). Never retried. */
export class RefundRefusedError extends RefusedError {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** The same idempotency key was sent with different parameters: a bug in casework, never retried. */
export class IdempotencyMismatchError extends ConflictError {}

/** The provider is rate limiting or down: retried with backoff. */
export class ProviderUnavailableError extends UnavailableError {}

/** A webhook whose signature does not verify, or that is not a provider event. */
export class ProviderEventError extends BadInputError {}
