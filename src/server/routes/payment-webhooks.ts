import type { IncomingMessage } from 'node:http';
import { CASEWORK_REFUND_KEY, ProviderEventError, type PaymentProvider, type RefundEvent } from '../../commerce/payment-provider';
import { withCustomer } from '../../db/pool';
import { recordPayoutEvent } from '../../db/payouts';
import { eventSeen, markEventSeen, payoutOwner } from '../../db/provider-events';
import type { FailedRefund } from '../../schemas/investigation';
import { reportRefundFailure } from '../../client/refund-failures';
import type { RouteContext, Trace } from '../context';
import { HttpError, readBodyText, type Answer } from '../http';

// POST /webhooks/payments/{provider}: the payment provider's own webhook (Stripe's refund.failed
// and refund.updated), verified by its adapter's readEvent over the raw body (Stripe-Signature);
// an unsigned or forged delivery is refused 400 and logged. A refund casework paid that the
// provider now reports failed or canceled is recorded in the refund trail (its payout), and the
// case that paid it is told (client/refund-failures.ts: signalled, or reopened when it has
// closed), so a person takes it over and the customer is told nothing untrue. Each event is acted on once; acting is itself idempotent, so a retried delivery after a
// failure on the way does no harm.

/** Largest webhook body read (Stripe's events are a few kilobytes). */
const MAX_EVENT_BYTES = 256 * 1024;

/** States after which nothing reached the customer. */
const FAILED = new Set(['failed', 'canceled']);

/** The header a provider signs its deliveries with. */
const SIGNATURE_HEADER: Record<string, string> = { stripe: 'stripe-signature' };

/** Handles one delivery; answers 200 for every verified event, acted on or not (the provider would only resend it). */
export function createPaymentWebhookHandler(ctx: RouteContext, payments: PaymentProvider) {
  const pool = ctx.deps.pool;
  return async (provider: string, req: IncomingMessage, trace: Trace): Promise<Answer> => {
    if (provider !== payments.name) throw new HttpError(404, `no webhook for payment provider "${provider.slice(0, 40)}": CASEWORK_PAYMENTS is ${payments.name}`);
    const raw = await readBodyText(req, MAX_EVENT_BYTES, 'webhook body');
    const header = req.headers[SIGNATURE_HEADER[provider] ?? `${provider}-signature`];
    let event: RefundEvent | undefined;
    try {
      event = payments.readEvent(Buffer.from(raw, 'utf8'), Array.isArray(header) ? header[0] : header);
    } catch (error) {
      if (!(error instanceof ProviderEventError)) throw error;
      trace.outcome = 'rejected';
      trace.refused = error.message;
      throw new HttpError(400, `refused: ${error.message}`);
    }
    if (!event) {
      trace.outcome = 'ignored';
      return { status: 200, body: { received: true, acted: false } };
    }
    trace.eventId = event.eventId;
    if (await eventSeen(pool, payments.name, event.eventId)) {
      trace.outcome = 'duplicate';
      return { status: 200, body: { received: true, duplicate: true } };
    }
    const refund = event.refund;
    const owner = await payoutOwner(pool, payments.name, refund.id, refund.metadata[CASEWORK_REFUND_KEY]);
    if (!owner) {
      // A refund made outside casework: the ledger reads it from the provider's report next time.
      trace.outcome = 'unmapped';
    } else {
      trace.customerId = owner.customer_id;
      trace.workflowId = owner.workflow_id;
      await withCustomer(pool, owner.customer_id, (client) => recordPayoutEvent(client, owner.refund_id, refund));
      if (FAILED.has(refund.status)) {
        const failure: FailedRefund = {
          refund_id: owner.refund_id,
          request_id: owner.request_id,
          order_id: owner.order_id,
          provider: payments.name,
          provider_refund_id: refund.id,
          status: refund.status,
          reason: refund.failureReason ?? null,
          event_id: event.eventId,
          at: new Date().toISOString(),
        };
        const delivered = await ctx.temporal('telling the case its refund failed', () =>
          reportRefundFailure(ctx.deps.client, pool, { workflowId: owner.workflow_id, customerId: owner.customer_id }, failure, {
            taskQueue: ctx.taskQueue,
            settings: ctx.settings,
          }),
        );
        trace.outcome = delivered === 'reopened' ? 'reopened_for_person' : 'handed_over';
      } else trace.outcome = 'recorded';
    }
    await markEventSeen(pool, { provider: payments.name, eventId: event.eventId, type: event.type, providerRefundId: refund.id });
    return { status: 200, body: { received: true, acted: true } };
  };
}
