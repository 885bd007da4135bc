import type { Pool, PoolClient } from 'pg';
import { z } from 'zod';
import { ToolError } from '../../schemas/tool-call';
import { ORDER_STATUS_CODES, SHIPMENT_STATUS_CODES, describeCode } from './codes';
import { defineTool } from './define';
import { withCustomer } from '../../db/pool';
import { isoTimestamp } from '../../db/rows';
import { pageWindow } from './shape';

/** Most item lines get_order shows; an order with more says how many it left out. */
export const MAX_ITEMS_SHOWN = 10;

const OrderItem = z.object({ name: z.string(), qty: z.number().int(), unit_price_cents: z.number().int() });

/** The order fields the tools read (never the ERP, fraud or warehouse columns). */
const OrderRow = z.object({
  order_id: z.string(),
  placed_at: isoTimestamp,
  status_code: z.string(),
  currency: z.string(),
  total_cents: z.number().int(),
  items: z.array(OrderItem),
  delivery_address: z.string(),
  address_lat: z.number().nullable(),
  address_lon: z.number().nullable(),
  delivery_instructions: z.string().nullable(),
});
/** One order as the tools read it. */
export type OrderRow = z.infer<typeof OrderRow>;

const ShipmentRow = z.object({ courier: z.string(), tracking_number: z.string(), status_code: z.string() });

/** The message for an order the customer does not have (unknown, or another customer's: they look the same). */
export function noSuchOrder(orderId: string): string {
  return `No order ${orderId} on this customer's account.`;
}

/** The order, under the caller's customer scope; a ToolError when it is not on this account. */
export async function requireOrder(client: PoolClient, customerId: string, orderId: string): Promise<OrderRow> {
  const { rows } = await client.query(
    `SELECT order_id, placed_at, status_code, currency, total_cents, items, delivery_address, address_lat, address_lon, delivery_instructions
       FROM orders WHERE customer_id = $1 AND order_id = $2`,
    [customerId, orderId],
  );
  if (rows.length === 0) throw new ToolError(noSuchOrder(orderId));
  return OrderRow.parse(rows[0]);
}

/** The order's latest shipment, or null before one exists. */
async function latestShipment(client: PoolClient, customerId: string, orderId: string) {
  const { rows } = await client.query(
    `SELECT courier, tracking_number, status_code FROM shipments
      WHERE customer_id = $1 AND order_id = $2 ORDER BY created_at DESC, shipment_id DESC LIMIT 1`,
    [customerId, orderId],
  );
  return rows.length ? ShipmentRow.parse(rows[0]) : null;
}

/** get_order's result. */
export interface OrderResult {
  order_id: string;
  status: string;
  placed_at: string;
  total_cents: number;
  currency: string;
  items: { name: string; qty: number; price_cents: number }[];
  items_showing?: string;
  delivery_address: string;
  delivery_instructions: string | null;
  shipment: { courier: string; tracking_number: string; status: string } | null;
}

/** get_order: one order with its items, address and shipment, every code in words. */
export async function readOrder(client: PoolClient, customerId: string, orderId: string): Promise<OrderResult> {
  const order = await requireOrder(client, customerId, orderId);
  const shipment = await latestShipment(client, customerId, orderId);
  const items = order.items.slice(0, MAX_ITEMS_SHOWN).map((i) => ({ name: i.name, qty: i.qty, price_cents: i.unit_price_cents }));
  return {
    order_id: order.order_id,
    status: describeCode(ORDER_STATUS_CODES, order.status_code),
    placed_at: order.placed_at,
    total_cents: order.total_cents,
    currency: order.currency,
    items,
    ...(order.items.length > items.length ? { items_showing: `items 1-${items.length} of ${order.items.length}` } : {}),
    delivery_address: order.delivery_address,
    delivery_instructions: order.delivery_instructions,
    shipment: shipment ? { courier: shipment.courier, tracking_number: shipment.tracking_number, status: describeCode(SHIPMENT_STATUS_CODES, shipment.status_code) } : null,
  };
}

const OrderListRow = z.object({
  order_id: z.string(),
  placed_at: isoTimestamp,
  status_code: z.string(),
  total_cents: z.number().int(),
  courier: z.string().nullable(),
  total: z.union([z.number(), z.string()]).transform(Number),
});

/** list_orders' result. */
export interface OrderListResult {
  orders: { order_id: string; placed_at: string; status: string; total_cents: number; courier: string | null }[];
  showing: string;
}

/** list_orders: the most recent `limit` orders, newest first, saying how many there are in all. */
export async function readOrderList(client: PoolClient, customerId: string, limit: number): Promise<OrderListResult> {
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
      LIMIT $2`,
    [customerId, limit],
  );
  const parsed = rows.map((row) => OrderListRow.parse(row));
  const total = parsed[0]?.total ?? 0;
  return {
    orders: parsed.map((o) => ({
      order_id: o.order_id,
      placed_at: o.placed_at,
      status: describeCode(ORDER_STATUS_CODES, o.status_code),
      total_cents: o.total_cents,
      courier: o.courier,
    })),
    showing: pageWindow(total, 1, limit, 'orders').showing,
  };
}

/** get_order and list_orders over one pool. */
export function createOrderTools(deps: { pool: Pool }) {
  return {
    get_order: defineTool('get_order', ({ order_id }, context) => withCustomer(deps.pool, context.customerId, (client) => readOrder(client, context.customerId, order_id))),
    list_orders: defineTool('list_orders', ({ limit }, context) => withCustomer(deps.pool, context.customerId, (client) => readOrderList(client, context.customerId, limit))),
  };
}
