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
}

/** A refund the provider holds. */
export interface ProviderRefund {
  id: string;
  chargeId: string;
  amountCents: number;
  currency: string;
  /** As the provider answers: `pending` may still fail (a bank can refuse it days later). */
  status: 'pending' | 'succeeded' | 'failed' | 'canceled' | 'requires_action';
  failureReason?: string;
  createdAt: string;
  /** What casework attached (its refund id, the approval): how a provider refund is traced back. */
  metadata: Record<string, string>;
}

/** Why a refund is made, in the provider's words. */
export type RefundReason = 'duplicate' | 'fraudulent' | 'requested_by_customer';

/** One refund to make, exactly once. */
export interface RefundOrder {
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

/** The provider port. */
export interface PaymentProvider {
  /** The provider's name, for logs and the refund trail. */
  readonly name: string;
  /** The order's charges and every refund on them. */
  paymentsOf(orderId: string): Promise<{ charges: ProviderCharge[]; refunds: ProviderRefund[] }>;
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
