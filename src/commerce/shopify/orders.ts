import type { OrderSource, Page, ShopOrder, ShopOrderSummary } from '../shop';
import { createShopifyGraphql, type ShopifyGraphql } from './graphql';
import { CUSTOMER_ORDERS, ORDER_BY_ID, ORDER_BY_NAME, type ShopifyOrderNode, type ShopifyOrderSummaryNode } from './operations';
import { shopifyCustomerGid, type ShopifySettings } from './settings';
import { orderNameOf, orderNameQuery, orderSummaryOf, shipmentOf, shopOrderOf } from './translate';

// Orders and shipments from a Shopify shop (GraphQL Admin API). An order is found by casework's
// order id as the shop names it ("5102" is "#5102"), or by its GID, and is answered only when its
// customer is the Shopify customer the casework customer maps to (settings.customers, else the
// casework id taken as a Shopify customer id): another customer's order reads as no order.

/** The Shopify order source, with the tracking numbers a tracking aggregator is asked about. */
export interface ShopifyOrderSource extends OrderSource {
  /** Tracking numbers of the order's shipments (newest first), or [] when it is not this customer's. */
  trackingNumbers(customerId: string, orderId: string): Promise<string[]>;
}

/** A page of orders asked of Shopify at once (its connections take up to 250; 50 keeps a query's cost low). */
const ORDERS_PER_REQUEST = 50;

/** The Shopify customer a casework customer is, or undefined when the configuration cannot say. */
export function shopifyCustomerOf(settings: Pick<ShopifySettings, 'customers'>, customerId: string): string | undefined {
  return settings.customers.get(customerId) ?? shopifyCustomerGid(customerId);
}

/** The order source for one shop. `graphql` is the seam the payment provider shares. */
export function createShopifyOrderSource(settings: ShopifySettings, graphql: ShopifyGraphql = createShopifyGraphql(settings)): ShopifyOrderSource {
  const prefix = settings.orderNamePrefix;

  /** The order node, only when it is this customer's. */
  async function find(customerId: string, orderId: string): Promise<ShopifyOrderNode | undefined> {
    const customer = shopifyCustomerOf(settings, customerId);
    if (!customer || !orderId.trim()) return undefined;
    let node: ShopifyOrderNode | null | undefined;
    if (/^gid:\/\/shopify\/Order\/\d+$/.test(orderId)) {
      node = (await graphql<{ order: ShopifyOrderNode | null }>(ORDER_BY_ID, { id: orderId })).order;
    } else {
      const name = orderNameOf(orderId.trim(), prefix);
      const { orders } = await graphql<{ orders: { nodes: ShopifyOrderNode[] } }>(ORDER_BY_NAME, { query: orderNameQuery(name) });
      // Shopify's search matches loosely; only the order with exactly this name is the one asked for.
      node = orders.nodes.find((o) => o.name === name);
    }
    return node && node.customer?.id === customer ? node : undefined;
  }

  return {
    name: 'shopify',
    async order(customerId, orderId): Promise<ShopOrder | undefined> {
      const node = await find(customerId, orderId);
      return node ? shopOrderOf(node, prefix) : undefined;
    },
    async orders(customerId, page): Promise<Page<ShopOrderSummary>> {
      const customer = shopifyCustomerOf(settings, customerId);
      if (!customer) return { total: 0, items: [] };
      const wanted = page.offset + page.limit;
      const nodes: ShopifyOrderSummaryNode[] = [];
      let total: number;
      let after: string | null = null;
      do {
        const first = Math.min(ORDERS_PER_REQUEST, Math.max(1, wanted - nodes.length));
        const answer: { customer: { numberOfOrders: string; orders: { pageInfo: { hasNextPage: boolean; endCursor: string | null }; nodes: ShopifyOrderSummaryNode[] } } | null } =
          await graphql(CUSTOMER_ORDERS, { id: customer, first, after });
        if (!answer.customer) return { total: 0, items: [] };
        total = Number(answer.customer.numberOfOrders);
        nodes.push(...answer.customer.orders.nodes);
        after = answer.customer.orders.pageInfo.hasNextPage ? answer.customer.orders.pageInfo.endCursor : null;
      } while (after && nodes.length < wanted);
      return { total, items: nodes.slice(page.offset, wanted).map((o) => orderSummaryOf(o, prefix)) };
    },
    async latestShipment(customerId, orderId) {
      const node = await find(customerId, orderId);
      return node ? shipmentOf(node) : null;
    },
    async trackingNumbers(customerId, orderId) {
      const node = await find(customerId, orderId);
      if (!node) return [];
      return [...node.fulfillments]
        .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt))
        .flatMap((f) => f.trackingInfo.map((t) => t.number))
        .filter((n): n is string => Boolean(n));
    },
  };
}
