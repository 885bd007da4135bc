import type { PoolClient } from 'pg';
import type { ShopOrder } from '../commerce/shop';

// What the commerce port last reported of an order (shop_orders, migrations/033_shop_orders.sql):
// its currency and total, under the shop's own order id. The refund trail and the order ledger
// name orders through it, so an order that lives in Shopify is refunded as a demo order is, and
// the ledger's bounds read the total the shop reports. Written by the refund tools, inside the
// customer's transaction, every time they read the order; the newest report wins.

/** Records the order as the shop (`shop`, the adapter's name) just reported it. */
export async function recordShopOrder(client: PoolClient, customerId: string, shop: string, order: Pick<ShopOrder, 'orderId' | 'currency' | 'totalCents'>): Promise<void> {
  await client.query(
    `INSERT INTO shop_orders (order_id, customer_id, shop, currency, total_cents) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (order_id) DO UPDATE SET currency = EXCLUDED.currency, total_cents = EXCLUDED.total_cents, shop = EXCLUDED.shop, reported_at = now()
       WHERE shop_orders.customer_id = EXCLUDED.customer_id`,
    [order.orderId, customerId, shop, order.currency, order.totalCents],
  );
}
