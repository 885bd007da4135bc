import Stripe from 'stripe';
import {
  IdempotencyMismatchError,
  ProviderEventError,
  ProviderUnavailableError,
  RefundRefusedError,
  type PaymentProvider,
  type ProviderCharge,
  type ProviderRefund,
  type RefundEvent,
} from './payment-provider';

// Stripe as the payment provider, through the official `stripe` package. An order's charges are
// found by the `order_id` the shop puts in their metadata (charges/search); refunds are created
// with the idempotency key derived from the approval, and the SDK re-sends a request that got no
// answer with that same key, so a lost response never refunds twice. Retries inside one attempt
// are short (Stripe's 429s carry no Retry-After: the SDK backs off); beyond them the activity's
// retry policy takes over, with the same key again.

/** What the Stripe adapter needs. */
export interface StripeSettings {
  /** A restricted or secret key with read access to charges and write access to refunds. */
  secretKey: string;
  /** The webhook endpoint's signing secret (whsec_…), for refund.failed and refund.updated. */
  webhookSecret?: string;
  /** Where the API is; unset, Stripe's own. The stand-in's URL in tests and the stand-in demo. */
  apiBase?: string;
  timeoutMs: number;
  /** Network retries inside one call, each with the same idempotency key. */
  maxNetworkRetries?: number;
}

/** Waits between tries of a call Stripe answered 429, within one attempt (then the activity retries). */
const RATE_LIMIT_BACKOFF_MS = [250, 500, 1_000, 2_000];

/** How old a signed event may be (Stripe's own default tolerance). */
const EVENT_TOLERANCE_SECONDS = 300;

const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

/** Card brands as the neutral method codes (PAYMENT_METHOD_CODES); a brand not listed reads as unknown. */
const CARD_BRANDS: Readonly<Record<string, string>> = { visa: 'card_visa', mastercard: 'card_mc', amex: 'card_amex' };

/** How a charge was paid, from its payment_method_details (a card's brand, or the wallet it came through), neutral. */
function methodCodeOf(details: Stripe.Charge.PaymentMethodDetails | null | undefined): string | undefined {
  if (details?.type === 'paypal') return 'paypal';
  if (details?.type !== 'card') return undefined;
  if (details.card?.wallet?.type === 'apple_pay') return 'applepay';
  return CARD_BRANDS[details.card?.brand ?? ''];
}

function chargeOf(charge: Stripe.Charge, orderId: string): ProviderCharge {
  const methodCode = methodCodeOf(charge.payment_method_details);
  return {
    id: charge.id,
    orderId,
    amountCents: charge.amount_captured || charge.amount,
    currency: charge.currency.toUpperCase(),
    status: charge.status === 'succeeded' && charge.captured ? 'captured' : charge.status === 'failed' ? 'failed' : 'pending',
    refundedCents: charge.amount_refunded,
    createdAt: iso(charge.created),
    ...(methodCode ? { methodCode } : {}),
  };
}

function refundOf(refund: Stripe.Refund): ProviderRefund {
  const chargeId = typeof refund.charge === 'string' ? refund.charge : (refund.charge?.id ?? null);
  return {
    id: refund.id,
    chargeId,
    amountCents: refund.amount,
    currency: refund.currency.toUpperCase(),
    status: (refund.status ?? 'pending') as ProviderRefund['status'],
    ...(refund.failure_reason ? { failureReason: refund.failure_reason } : {}),
    createdAt: iso(refund.created),
    metadata: { ...(refund.metadata ?? {}) },
  };
}

/** Stripe's error as casework's: refusals a person reads, a key misuse, or retryable. */
function mapError(error: unknown): unknown {
  if (!(error instanceof Stripe.errors.StripeError)) return error;
  if (error instanceof Stripe.errors.StripeIdempotencyError) return new IdempotencyMismatchError(`Stripe refused the idempotency key: ${error.message}`);
  if (error instanceof Stripe.errors.StripeRateLimitError) return new ProviderUnavailableError('Stripe is rate limiting refunds; retry shortly');
  if (error instanceof Stripe.errors.StripeConnectionError || error instanceof Stripe.errors.StripeAPIError)
    return new ProviderUnavailableError(`Stripe did not answer (${error.type}); retry shortly`);
  if (error instanceof Stripe.errors.StripeInvalidRequestError && (error.code === 'charge_already_refunded' || error.code === 'amount_too_large')) {
    const words = error.code === 'charge_already_refunded' ? 'the charge is already refunded in full' : 'the refund is more than is left unrefunded on the charge';
    return new RefundRefusedError(`Stripe refused the refund: ${words}`, error.code);
  }
  // Authentication, permissions, a bad request: configuration or a bug, which retrying cannot fix.
  return new RefundRefusedError(`Stripe refused the request (${error.type}${error.code ? `, ${error.code}` : ''}): ${error.message}`, error.code ?? error.type);
}

/** The Stripe payment provider. */
export function createStripeProvider(settings: StripeSettings): PaymentProvider {
  const base = settings.apiBase ? new URL(settings.apiBase) : undefined;
  const stripe = new Stripe(settings.secretKey, {
    timeout: settings.timeoutMs,
    maxNetworkRetries: settings.maxNetworkRetries ?? 2,
    ...(base ? { host: base.hostname, port: base.port || (base.protocol === 'https:' ? 443 : 80), protocol: base.protocol.replace(':', '') as 'http' | 'https' } : {}),
  });
  // The SDK retries lost connections and 5xx itself; a 429 it does not (Stripe sends no
  // Retry-After), so short backoffs are taken here, within the attempt, with the same key.
  const call = async <T>(fn: () => Promise<T>): Promise<T> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (error) {
        if (!(error instanceof Stripe.errors.StripeRateLimitError) || attempt >= RATE_LIMIT_BACKOFF_MS.length) throw mapError(error);
        await new Promise((resolve) => setTimeout(resolve, RATE_LIMIT_BACKOFF_MS[attempt]! * (0.75 + Math.random() / 2)));
      }
    }
  };
  return {
    name: 'stripe',
    async paymentsOf(_customerId, orderId) {
      // The query language quotes with single quotes; an order id is a desk-safe id, never quoted text.
      const query = `metadata['order_id']:'${orderId.replace(/['\\]/g, '')}'`;
      const charges: Stripe.Charge[] = await call(() => stripe.charges.search({ query, limit: 100 }).autoPagingToArray({ limit: 1000 }));
      const refunds: Stripe.Refund[] = [];
      for (const charge of charges) refunds.push(...(await call(() => stripe.refunds.list({ charge: charge.id, limit: 100 }).autoPagingToArray({ limit: 1000 }))));
      return { charges: charges.map((c) => chargeOf(c, orderId)), refunds: refunds.map(refundOf) };
    },
    async refund(order) {
      const refund = await call(() =>
        stripe.refunds.create({ charge: order.chargeId, amount: order.amountCents, reason: order.reason, metadata: order.metadata }, { idempotencyKey: order.idempotencyKey }),
      );
      return refundOf(refund);
    },
    readEvent(rawBody, signatureHeader) {
      if (!settings.webhookSecret) throw new ProviderEventError('Stripe webhooks are not configured (CASEWORK_STRIPE_WEBHOOK_SECRET)');
      if (!signatureHeader) throw new ProviderEventError('missing Stripe-Signature header');
      let event: Stripe.Event;
      try {
        event = stripe.webhooks.constructEvent(rawBody, signatureHeader, settings.webhookSecret, EVENT_TOLERANCE_SECONDS);
      } catch (error) {
        throw new ProviderEventError(`Stripe-Signature does not verify: ${(error as Error).message}`);
      }
      if (event.type !== 'refund.failed' && event.type !== 'refund.updated' && event.type !== 'refund.created') return undefined;
      return { eventId: event.id, type: event.type, refund: refundOf(event.data.object) } satisfies RefundEvent;
    },
  };
}
