import type { Pool } from 'pg';
import { z } from 'zod';
import { withCustomer } from '../../db/pool';
import { isoTimestamp, numberFromText } from '../../db/rows';
import type { OrderSource, Page, PageRequest, ShopOrder, ShopOrderSummary, ShopShipment } from '../shop';

// The demo shop's orders and shipments: casework's own tables (migrations/002_shop.sql), read
// under row-level security for the customer asked about, so another customer's order reads as none.

const OrderRow = z.object({
  order_id: z.string(),
  placed_at: isoTimestamp,
  status_code: z.string(),
  currency: z.string(),
  total_cents: z.number().int(),
  items: z.array(z.object({ name: z.string(), qty: z.number().int(), unit_price_cents: z.number().int() })),
  delivery_address: z.string(),
  address_lat: z.number().nullable(),
  address_lon: z.number().nullable(),
  delivery_instructions: z.string().nullable(),
});

const ShipmentRow = z.object({ courier: z.string(), tracking_number: z.string(), status_code: z.string() });

const OrderListRow = z.object({
  order_id: z.string(),
  placed_at: isoTimestamp,
  status_code: z.string(),
  total_cents: z.number().int(),
  courier: z.string().nullable(),
  total: numberFromText,
});

function orderOf(row: z.infer<typeof OrderRow>): ShopOrder {
  return {
    orderId: row.order_id,
    placedAt: row.placed_at,
    status: row.status_code,
    currency: row.currency,
    totalCents: row.total_cents,
    lines: row.items.map((i) => ({ name: i.name, qty: i.qty, unitPriceCents: i.unit_price_cents })),
    deliveryAddress: row.delivery_address,
    addressPosition: row.address_lat === null || row.address_lon === null ? null : { lat: row.address_lat, lon: row.address_lon },
    deliveryInstructions: row.delivery_instructions,
  };
}

/** The demo shop's orders. */
export function demoOrders(pool: Pool): OrderSource {
  return {
    name: 'demo',
    order: (customerId, orderId) =>
      withCustomer(pool, customerId, async (client) => {
        const { rows } = await client.query(
          `SELECT order_id, placed_at, status_code, currency, total_cents, items, delivery_address, address_lat, address_lon, delivery_instructions
             FROM orders WHERE customer_id = $1 AND order_id = $2`,
          [customerId, orderId],
        );
        return rows.length ? orderOf(OrderRow.parse(rows[0])) : undefined;
      }),
    orders: (customerId, page: PageRequest) =>
      withCustomer(pool, customerId, async (client): Promise<Page<ShopOrderSummary>> => {
        const { rows } = await client.query(
          `SELECT o.order_id, o.placed_at, o.status_code, o.total_cents, s.courier, count(*) OVER () AS total
             FROM orders o
             LEFT JOIN LATERAL (
               SELECT courier FROM shipments s
                WHERE s.customer_id = o.customer_id AND s.order_id = o.order_id
                ORDER BY s.created_at DESC LIMIT 1
             ) s ON true
            WHERE o.customer_id = $1
            ORDER BY o.placed_at DESC, o.order_id DESC
            LIMIT $2 OFFSET $3`,
          [customerId, page.limit, page.offset],
        );
        const parsed = rows.map((row) => OrderListRow.parse(row));
        return {
          total: parsed[0]?.total ?? 0,
          items: parsed.map((o) => ({ orderId: o.order_id, placedAt: o.placed_at, status: o.status_code, totalCents: o.total_cents, courier: o.courier })),
        };
      }),
    latestShipment: (customerId, orderId) =>
      withCustomer(pool, customerId, async (client): Promise<ShopShipment | null> => {
        const { rows } = await client.query(
          `SELECT courier, tracking_number, status_code FROM shipments
            WHERE customer_id = $1 AND order_id = $2 ORDER BY created_at DESC, shipment_id DESC LIMIT 1`,
          [customerId, orderId],
        );
        if (!rows.length) return null;
        const row = ShipmentRow.parse(rows[0]);
        return { courier: row.courier, trackingNumber: row.tracking_number, status: row.status_code };
      }),
  };
}
