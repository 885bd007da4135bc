import { DEMO_PARCELS } from './demo-data/demo-parcels';
import { CUSTOMERS, ORDERS, PAYMENTS } from './demo-data/demo-shop';
import { shipmentRow } from './demo-data/demo-tracking';
import type { ShopifyStandin, StandinOrder } from './shopify-standin';

// The demo shop (src/dev/demo-data) as a Shopify store in the stand-in: the same customers,
// orders, lines, addresses, charges, refunds and shipments, written as Shopify holds them
// (orders named "#5102", money as MoneyBags, fulfillments with NorthX tracking), so the same
// investigations run against the Shopify adapters as against the demo tables.

/** The demo's shipment codes as the fulfillment display status Shopify shows for them. */
const DISPLAY_STATUS: Readonly<Record<string, string>> = {
  LBL: 'LABEL_PRINTED',
  TRN: 'IN_TRANSIT',
  OFD: 'OUT_FOR_DELIVERY',
  DLV: 'DELIVERED',
  EXC: 'FAILURE',
  // Shopify has no "returning to sender" display status; the carrier's not-delivered is the nearest.
  RTS: 'NOT_DELIVERED',
};

/** A UK address line split as Shopify's MailingAddress holds it: street lines, city, postcode. */
function addressOf(line: string, lat: number | null, lon: number | null): StandinOrder['address'] {
  const parts = line.split(', ');
  const last = parts.pop() ?? '';
  const town = /^(.*) ([A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2})$/.exec(last);
  return {
    address1: parts.join(', ') || null,
    address2: null,
    city: town ? town[1]! : last,
    province: null,
    zip: town ? town[2]! : null,
    country: 'United Kingdom',
    latitude: lat,
    longitude: lon,
  };
}

/** Seeds the demo shop; returns casework customer id -> Shopify customer GID (for ShopifySettings.customers). */
export function seedDemoShop(standin: ShopifyStandin): Map<string, string> {
  const customers = new Map(CUSTOMERS.map((c) => [c.customer_id, standin.addCustomer(c.email)]));
  for (const order of ORDERS) {
    const parcel = DEMO_PARCELS.find((p) => p.order_id === order.order_id);
    const shipment = parcel ? shipmentRow(parcel) : undefined;
    const charges = PAYMENTS.filter((p) => p.order_id === order.order_id && p.kind === 'charge').sort((a, b) => a.created_at.localeCompare(b.created_at));
    const added = standin.addOrder({
      name: `#${order.order_id}`,
      customerId: customers.get(order.customer_id) ?? null,
      createdAt: order.placed_at,
      currency: order.currency,
      lines: order.items.map((item) => ({ name: item.name, quantity: item.qty, unitMinor: item.unit_price_cents })),
      address: addressOf(order.delivery_address, order.address_lat, order.address_lon),
      note: order.delivery_instructions,
      cancelledAt: order.status_code === 'CANC' ? order.updated_at : null,
      fulfillments: shipment
        ? [{ createdAt: shipment.created_at, displayStatus: DISPLAY_STATUS[shipment.status_code] ?? 'IN_TRANSIT', company: shipment.courier, number: shipment.tracking_number }]
        : [],
      charges: charges.map((c) => ({ amountMinor: c.amount_cents, createdAt: c.created_at })),
    });
    const sales = standin.transactions(added.id);
    for (const refund of PAYMENTS.filter((p) => p.order_id === order.order_id && p.kind === 'refund')) {
      standin.addRefund({ parentId: sales[0]!.id, amountMinor: refund.amount_cents, createdAt: refund.created_at });
    }
  }
  return customers;
}
