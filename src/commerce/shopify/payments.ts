import { createHmac, timingSafeEqual } from 'node:crypto';
import { minorToDecimal } from '../../context/money';
import { ProviderEventError, RefundRefusedError, type PaymentProvider, type ProviderRefund, type RefundEvent } from '../payment-provider';
import { createShopifyGraphql, type ShopifyGraphql } from './graphql';
import { ORDER_ID_BY_NAME, ORDER_PAYMENTS, REFUND_CREATE, TRANSACTION, type ShopifyChargeNode, type ShopifyPaymentsNode, type ShopifyRefund } from './operations';
import type { ShopifySettings } from './settings';
import { orderIdOfName, orderNameOf, orderNameQuery, paymentsOf, providerRefundOf, refundNote, refundStatusOf } from './translate';

// Shopify as the payment provider, for shops on Shopify Payments: an order's charges are its
// sale and capture transactions, its refunds the refund transactions; a refund is one
// refundCreate against one charge, for an amount (no line items are restocked), under the
// @idempotent key derived from the approval. Shopify keeps a key for 24 hours and answers a
// repeat with the refund already made (a lost response re-sent by the client, a retried
// activity, a killed worker's successor); the same key with another amount is refused.

/** The payment provider for one shop. `graphql` is shared with the order source when both are wired. */
export function createShopifyPaymentProvider(settings: ShopifySettings, graphql: ShopifyGraphql = createShopifyGraphql(settings)): PaymentProvider {
  const prefix = settings.orderNamePrefix;

  async function orderGid(orderId: string): Promise<string | undefined> {
    if (/^gid:\/\/shopify\/Order\/\d+$/.test(orderId)) return orderId;
    const name = orderNameOf(orderId.trim(), prefix);
    const { orders } = await graphql<{ orders: { nodes: { id: string; name: string }[] } }>(ORDER_ID_BY_NAME, { query: orderNameQuery(name) });
    return orders.nodes.find((o) => o.name === name)?.id;
  }

  return {
    name: 'shopify',
    async paymentsOf(_customerId, orderId) {
      const id = await orderGid(orderId);
      if (!id) return { charges: [], refunds: [] };
      const { order } = await graphql<{ order: ShopifyPaymentsNode | null }>(ORDER_PAYMENTS, { id });
      return order ? paymentsOf(order, orderIdOfName(order.name, prefix)) : { charges: [], refunds: [] };
    },
    async refund(order): Promise<ProviderRefund> {
      const { node } = await graphql<{ node: ShopifyChargeNode | null }>(TRANSACTION, { id: order.chargeId });
      if (!node?.order || !(node.kind === 'SALE' || node.kind === 'CAPTURE')) {
        throw new RefundRefusedError(`Shopify has no sale or capture ${order.chargeId} to refund`, 'charge_not_found');
      }
      const currency = node.amountSet.shopMoney.currencyCode;
      const input = {
        orderId: node.order.id,
        note: refundNote(order.reason, order.metadata),
        notify: false,
        transactions: [
          { orderId: node.order.id, parentId: node.id, amount: minorToDecimal(order.amountCents, currency), gateway: node.gateway ?? 'shopify_payments', kind: 'REFUND' },
        ],
      };
      const { refundCreate } = await graphql<{ refundCreate: { refund: ShopifyRefund | null; userErrors: { field: string[] | null; message: string }[] } }>(REFUND_CREATE, {
        input,
        idempotencyKey: order.idempotencyKey,
      });
      if (refundCreate.userErrors.length > 0 || !refundCreate.refund) {
        const words = refundCreate.userErrors.map((e) => e.message).join('; ') || 'no refund was made';
        throw new RefundRefusedError(`Shopify refused the refund: ${words}`, 'shopify_user_error');
      }
      const transaction = refundCreate.refund.transactions.nodes.find((t) => t.kind === 'REFUND' && t.parentTransaction?.id === node.id);
      if (!transaction) throw new RefundRefusedError(`Shopify made refund ${refundCreate.refund.id} with no payment back to ${order.chargeId}`, 'no_refund_transaction');
      return providerRefundOf(transaction, refundCreate.refund.note);
    },
    readEvent(rawBody, signatureHeader): RefundEvent | undefined {
      if (!settings.webhookSecret) throw new ProviderEventError('Shopify webhooks are not configured (CASEWORK_SHOPIFY_WEBHOOK_SECRET)');
      if (!signatureHeader) throw new ProviderEventError('missing X-Shopify-Hmac-Sha256 header');
      const expected = createHmac('sha256', settings.webhookSecret).update(rawBody).digest();
      const given = Buffer.from(signatureHeader, 'base64');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new ProviderEventError('X-Shopify-Hmac-Sha256 does not verify');
      let refund: ShopifyRefundWebhook;
      try {
        refund = JSON.parse(rawBody.toString('utf8')) as ShopifyRefundWebhook;
      } catch {
        throw new ProviderEventError('the Shopify webhook body is not JSON');
      }
      // refunds/create: one refund and its transactions. Anything else is not a refund event.
      if (typeof refund?.id !== 'number' || !Array.isArray(refund.transactions)) return undefined;
      const transaction = refund.transactions.find((t) => t.kind === 'refund');
      if (!transaction) return undefined;
      const converted = providerRefundOf(
        {
          id: `gid://shopify/OrderTransaction/${transaction.id}`,
          kind: 'REFUND',
          status: transaction.status.toUpperCase(),
          gateway: transaction.gateway ?? null,
          createdAt: transaction.created_at,
          errorCode: transaction.error_code ?? null,
          amountSet: { shopMoney: { amount: transaction.amount, currencyCode: transaction.currency } },
          parentTransaction: transaction.parent_id ? { id: `gid://shopify/OrderTransaction/${transaction.parent_id}` } : null,
        },
        refund.note ?? null,
      );
      const type = refundStatusOf(transaction.status.toUpperCase()) === 'failed' ? 'refund.failed' : 'refund.created';
      return { eventId: `shopify-refund-${refund.id}-${transaction.id}-${transaction.status}`, type, refund: converted };
    },
  };
}

/** The refunds/create webhook body (the REST Refund resource), the fields casework reads. */
interface ShopifyRefundWebhook {
  id: number;
  order_id: number;
  note?: string | null;
  transactions: {
    id: number;
    kind: string;
    status: string;
    amount: string;
    currency: string;
    gateway?: string;
    parent_id?: number | null;
    created_at: string;
    error_code?: string | null;
  }[];
}
