import { ToolError } from '../../schemas/tool-call';
import type { Commerce, OrderSource, ShopOrder } from '../../commerce/shop';
import { ORDER_STATUS_CODES, SHIPMENT_STATUS_CODES, describeCode } from './codes';
import { defineTool } from './define';
import { pageWindow } from './shape';

/** Most item lines get_order shows; an order with more says how many it left out. */
export const MAX_ITEMS_SHOWN = 10;

/** The message for an order the customer does not have (unknown, or another customer's: they look the same). */
export function noSuchOrder(orderId: string): string {
  return `No order ${orderId} on this customer's account.`;
}

/** The order, as the shop holds it for this customer; a ToolError when it is not on this account. */
export async function requireOrder(orders: OrderSource, customerId: string, orderId: string): Promise<ShopOrder> {
  const order = await orders.order(customerId, orderId);
  if (!order) throw new ToolError(noSuchOrder(orderId));
  return order;
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
export async function readOrder(orders: OrderSource, customerId: string, orderId: string): Promise<OrderResult> {
  const order = await requireOrder(orders, customerId, orderId);
  const shipment = await orders.latestShipment(customerId, orderId);
  const items = order.lines.slice(0, MAX_ITEMS_SHOWN).map((i) => ({ name: i.name, qty: i.qty, price_cents: i.unitPriceCents }));
  return {
    order_id: order.orderId,
    status: describeCode(ORDER_STATUS_CODES, order.status),
    placed_at: order.placedAt,
    total_cents: order.totalCents,
    currency: order.currency,
    items,
    ...(order.lines.length > items.length ? { items_showing: `items 1-${items.length} of ${order.lines.length}` } : {}),
    delivery_address: order.deliveryAddress,
    delivery_instructions: order.deliveryInstructions,
    shipment: shipment ? { courier: shipment.courier, tracking_number: shipment.trackingNumber, status: describeCode(SHIPMENT_STATUS_CODES, shipment.status) } : null,
  };
}

/** list_orders' result. */
export interface OrderListResult {
  orders: { order_id: string; placed_at: string; status: string; total_cents: number; courier: string | null }[];
  showing: string;
}

/** list_orders: the most recent `limit` orders, newest first, saying how many there are in all. */
export async function readOrderList(orders: OrderSource, customerId: string, limit: number): Promise<OrderListResult> {
  const page = await orders.orders(customerId, { offset: 0, limit });
  return {
    orders: page.items.slice(0, limit).map((o) => ({
      order_id: o.orderId,
      placed_at: o.placedAt,
      status: describeCode(ORDER_STATUS_CODES, o.status),
      total_cents: o.totalCents,
      courier: o.courier,
    })),
    showing: pageWindow(page.total, 1, limit, 'orders').showing,
  };
}

/** get_order and list_orders, read through the shop's order source. */
export function createOrderTools(deps: { commerce: Commerce }) {
  const { orders } = deps.commerce;
  return {
    get_order: defineTool('get_order', ({ order_id }, context) => readOrder(orders, context.customerId, order_id)),
    list_orders: defineTool('list_orders', ({ limit }, context) => readOrderList(orders, context.customerId, limit)),
  };
}
