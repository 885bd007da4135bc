import type { PaymentProvider } from './payment-provider';

// The commerce port: where a shop's orders, shipments, tracking, earlier tickets and policies
// really live. Every investigation tool reads through it; the demo shop (casework's own tables)
// is one adapter, Shopify, a tracking aggregator and MCP servers are others. Adapters translate
// their systems' states into the neutral codes below (the demo's vocabulary, put into words by
// src/activities/tools/codes.ts), and the tools shape results above the port, so the model
// reads the same lean results whichever shop is connected. Every read names the customer it
// is for: an adapter must answer only with that customer's records (the demo's row-level
// security, a Shopify order's customer compared), and an order of another customer reads as
// no order at all.

/** A map position. */
export interface Position {
  lat: number;
  lon: number;
}

/** One line of an order. */
export interface OrderLine {
  name: string;
  qty: number;
  unitPriceCents: number;
}

/** Order states, neutral: PROC, SHPD, DLVD, EXCP, RFND, PRFD, CANC (ORDER_STATUS_CODES). */
export type OrderStatusCode = string;

/** One order as the shop holds it: lines and totals in integer minor units of `currency`. */
export interface ShopOrder {
  orderId: string;
  placedAt: string;
  status: OrderStatusCode;
  /** ISO 4217, upper case. */
  currency: string;
  totalCents: number;
  lines: OrderLine[];
  deliveryAddress: string;
  addressPosition: Position | null;
  deliveryInstructions: string | null;
}

/** An order in a list, with its latest shipment's courier. */
export interface ShopOrderSummary {
  orderId: string;
  placedAt: string;
  status: OrderStatusCode;
  totalCents: number;
  courier: string | null;
}

/** A shipment (a fulfilment with tracking). `status` is neutral: LBL, TRN, OFD, DLV, EXC, RTS. */
export interface ShopShipment {
  courier: string;
  trackingNumber: string;
  status: string;
}

/**
 * One courier scan, neutral: `code` is one of COURIER_EVENT_CODES (MAN, PUP, … DLV), `podType`
 * one of DELIVERY_POD_TYPES on a delivery.
 */
export interface ShopTrackingEvent {
  occurredAt: string;
  code: string;
  podType: string | null;
  podPhotoUrl: string | null;
  podSignature: string | null;
  locationName: string;
  description: string;
  gps: Position | null;
  /** The courier's own note on the scan. */
  courierNote: string | null;
}

/** One page of something longer, newest first: `total` counts every item. */
export interface Page<T> {
  total: number;
  items: T[];
}

/** A window into a newest-first list. */
export interface PageRequest {
  offset: number;
  limit: number;
}

/** One of the customer's earlier tickets, as the desk (or the demo) holds it. */
export interface EarlierTicket {
  ticketId: string;
  openedAt: string;
  status: string;
  orderId: string | null;
  subject: string;
  body: string;
}

/** One refund or returns policy. */
export interface ShopPolicy {
  topic: string;
  title: string;
  body: string;
  keywords: string[];
}

/** Orders and their shipments. */
export interface OrderSource {
  readonly name: string;
  /** The order, or undefined when this customer has no such order. */
  order(customerId: string, orderId: string): Promise<ShopOrder | undefined>;
  /** The customer's orders, newest first. */
  orders(customerId: string, page: PageRequest): Promise<Page<ShopOrderSummary>>;
  /** The order's latest shipment, or null before one exists. */
  latestShipment(customerId: string, orderId: string): Promise<ShopShipment | null>;
}

/** Courier scans of an order's shipments. */
export interface TrackingSource {
  readonly name: string;
  /** Scans of the order (already known to be the customer's), newest first. */
  events(customerId: string, order: ShopOrder, page: PageRequest): Promise<Page<ShopTrackingEvent>>;
}

/** The customer's earlier tickets. */
export interface TicketSource {
  readonly name: string;
  /**
   * The customer's tickets before this one, newest first. `ticketId` is the ticket being
   * investigated (casework's id): a desk adapter reads its requester's other tickets from the
   * desk it came from; the demo's record holds only earlier ones and needs no id.
   */
  earlierTickets(customerId: string, page: PageRequest, ticketId?: string): Promise<Page<EarlierTicket>>;
}

/** The shop's policies. */
export interface PolicySource {
  readonly name: string;
  /** Every policy, in a stable order (the demo: by topic); a tie in matching goes to the first. */
  policies(): Promise<ShopPolicy[]>;
}

/** Everything the tools read and the one place money moves, as wired by configuration. */
export interface Commerce {
  orders: OrderSource;
  tracking: TrackingSource;
  tickets: TicketSource;
  policies: PolicySource;
  payments: PaymentProvider;
}
