import type { Pool } from 'pg';
import { z } from 'zod';
import type { Config } from '../../config';
import { isoTimestamp } from '../../db/rows';
import { startStripeStandin, type StandinPaymentMethod, type StripeStandin } from '../stripe-standin';

// `npm run demo -- --shop stand-in`: the demo with Stripe as its payment provider, played by the
// Stripe stand-in (a test double of Stripe's API, not Stripe). The demo shop's captured charges
// and the refunds already on them are put into the stand-in under the same ids, so the worker
// reads an order's payments from "Stripe" and pays refunds there, and decides as the demo shop does.

const PaymentRow = z.object({
  order_id: z.string(),
  kind: z.enum(['charge', 'refund']),
  amount_cents: z.number().int(),
  currency: z.string(),
  processor_code: z.string(),
  processor_ref: z.string(),
  method_code: z.string().nullable(),
  created_at: isoTimestamp,
});

const card = (brand: 'visa' | 'mastercard' | 'amex', wallet: { type: 'apple_pay' } | null = null): StandinPaymentMethod => ({
  type: 'card',
  card: { brand, last4: '4242', wallet },
});

/** The demo's payment methods as Stripe's payment_method_details (gift cards and store credit never pass through Stripe). */
const METHODS: Readonly<Record<string, StandinPaymentMethod>> = {
  card_visa: card('visa'),
  card_mc: card('mastercard'),
  card_amex: card('amex'),
  applepay: card('visa', { type: 'apple_pay' }),
  paypal: { type: 'paypal', paypal: {} },
};

/** Starts the Stripe stand-in; `config` chooses it as the payment provider. */
export async function startStandinPayments(): Promise<{ standin: StripeStandin; config: Partial<Config> }> {
  const standin = await startStripeStandin();
  return {
    standin,
    config: {
      CASEWORK_PAYMENTS: 'stripe',
      CASEWORK_STRIPE_SECRET_KEY: standin.secretKey,
      CASEWORK_STRIPE_WEBHOOK_SECRET: standin.webhookSecret,
      CASEWORK_STRIPE_API_BASE: standin.url,
    },
  };
}

/**
 * Copies the demo shop's captured charges, and its settled or pending refunds (on the order's
 * first capture), into the stand-in. Reads every customer's records, so it takes the admin pool.
 */
export async function mirrorDemoPayments(admin: Pool, standin: StripeStandin): Promise<{ charges: number; refunds: number }> {
  const { rows } = await admin.query(
    `SELECT order_id, kind, amount_cents, currency, processor_code, processor_ref, method_code, created_at FROM payments
      WHERE (kind = 'charge' AND processor_code = 'CPT') OR (kind = 'refund' AND processor_code IN ('RFS', 'RFP'))
      ORDER BY kind, created_at, payment_id`,
  );
  const firstCharge = new Map<string, string>();
  let charges = 0;
  let refunds = 0;
  const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);
  for (const raw of rows) {
    const p = PaymentRow.parse(raw);
    if (p.kind === 'charge') {
      const paymentMethod = p.method_code ? METHODS[p.method_code] : undefined;
      standin.addCharge({
        orderId: p.order_id,
        amount: p.amount_cents,
        currency: p.currency,
        id: p.processor_ref,
        created: seconds(p.created_at),
        ...(paymentMethod ? { paymentMethod } : {}),
      });
      if (!firstCharge.has(p.order_id)) firstCharge.set(p.order_id, p.processor_ref);
      charges++;
      continue;
    }
    const chargeId = firstCharge.get(p.order_id);
    if (!chargeId) continue;
    standin.addRefund({ id: p.processor_ref, chargeId, amount: p.amount_cents, status: p.processor_code === 'RFS' ? 'succeeded' : 'pending', created: seconds(p.created_at) });
    refunds++;
  }
  return { charges, refunds };
}
