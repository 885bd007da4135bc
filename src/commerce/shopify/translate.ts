import { decimalToMinor } from '../../context/money';
import type { ProviderCharge, ProviderRefund, RefundReason } from '../payment-provider';
import type { OrderStatusCode, ShopOrder, ShopOrderSummary, ShopShipment } from '../shop';
import type { ShopifyFulfillment, ShopifyOrderNode, ShopifyOrderSummaryNode, ShopifyPaymentsNode, ShopifyTransaction, ShopMoney } from './operations';

// Shopify's states in casework's neutral codes (src/activities/tools/codes.ts), as the demo's
// are: the model reads the same words whichever shop is connected. Pure. A state Shopify adds
// later is passed through as it is, so the tools name it "unrecognised" rather than guess.

/** Fulfillment display statuses (FulfillmentDisplayStatus) as shipment codes (SHIPMENT_STATUS_CODES). */
const SHIPMENT_STATUS: Readonly<Record<string, string>> = {
  LABEL_PRINTED: 'LBL',
  LABEL_PURCHASED: 'LBL',
  CONFIRMED: 'LBL',
  SUBMITTED: 'LBL',
  CARRIER_PICKED_UP: 'TRN',
  FULFILLED: 'TRN',
  MARKED_AS_FULFILLED: 'TRN',
  IN_TRANSIT: 'TRN',
  READY_FOR_PICKUP: 'TRN',
  OUT_FOR_DELIVERY: 'OFD',
  DELIVERED: 'DLV',
  PICKED_UP: 'DLV',
  ATTEMPTED_DELIVERY: 'EXC',
  DELAYED: 'EXC',
  FAILURE: 'EXC',
  NOT_DELIVERED: 'EXC',
};

/** Fulfillments that never shipped anything. */
const NOT_A_SHIPMENT = new Set(['CANCELED', 'LABEL_VOIDED']);

/** A fulfillment's display status as a shipment code; an unknown status passed through. */
export function shipmentStatusOf(displayStatus: string | null): string {
  if (!displayStatus) return 'TRN';
  return SHIPMENT_STATUS[displayStatus] ?? displayStatus;
}

/** The latest fulfillment that is a shipment, or undefined before one exists. */
export function latestFulfillment(fulfillments: readonly ShopifyFulfillment[]): ShopifyFulfillment | undefined {
  return [...fulfillments].filter((f) => !NOT_A_SHIPMENT.has(f.displayStatus ?? '')).sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt))[0];
}

/**
 * An order's state as ORDER_STATUS_CODES: cancelled first, then what was refunded, then where
 * its latest shipment is (delivered, a delivery problem, on its way), else processing.
 */
export function orderStatusOf(order: Pick<ShopifyOrderNode, 'cancelledAt' | 'displayFinancialStatus' | 'displayFulfillmentStatus' | 'fulfillments'>): OrderStatusCode {
  if (order.cancelledAt) return 'CANC';
  if (order.displayFinancialStatus === 'REFUNDED') return 'RFND';
  if (order.displayFinancialStatus === 'PARTIALLY_REFUNDED') return 'PRFD';
  const latest = latestFulfillment(order.fulfillments);
  if (latest) {
    const shipment = shipmentStatusOf(latest.displayStatus);
    if (shipment === 'DLV') return 'DLVD';
    if (shipment === 'EXC') return 'EXCP';
    return 'SHPD';
  }
  return order.displayFulfillmentStatus === 'FULFILLED' || order.displayFulfillmentStatus === 'PARTIALLY_FULFILLED' ? 'SHPD' : 'PROC';
}

/** The order name Shopify shows for casework's order id: "5102" -> "#5102" (a name already prefixed is kept). */
export function orderNameOf(orderId: string, prefix: string): string {
  return prefix && orderId.startsWith(prefix) ? orderId : `${prefix}${orderId}`;
}

/** casework's order id for a Shopify order name: "#5102" -> "5102". */
export function orderIdOfName(name: string, prefix: string): string {
  return prefix && name.startsWith(prefix) ? name.slice(prefix.length) : name;
}

/** A search query for one order name, quoted as Shopify's search syntax takes it. */
export function orderNameQuery(name: string): string {
  return `name:${JSON.stringify(name)}`;
}

const minor = (money: ShopMoney) => decimalToMinor(money.shopMoney.amount, money.shopMoney.currencyCode);

/** The shipping address on one line, as the tools show it: "14 Orchard Lane, Headingley, Leeds LS6 3PL". */
export function addressLine(address: ShopifyOrderNode['shippingAddress']): string {
  if (!address) return '';
  const town = [address.city, address.province, address.zip].filter((part) => part && part.trim()).join(' ');
  return [address.address1, address.address2, town].filter((part) => part && part.trim()).join(', ');
}

/** Shopify's DateTime ("2026-10-05T18:05:00Z") as the port's ISO instant, with milliseconds as every adapter gives it, so the model reads one form. */
function instant(dateTime: string): string {
  const at = Date.parse(dateTime);
  return Number.isNaN(at) ? dateTime : new Date(at).toISOString();
}

/** A Shopify order as the commerce port's ShopOrder, in shop-currency minor units. */
export function shopOrderOf(order: ShopifyOrderNode, prefix: string): ShopOrder {
  const address = order.shippingAddress;
  return {
    orderId: orderIdOfName(order.name, prefix),
    placedAt: instant(order.createdAt),
    status: orderStatusOf(order),
    currency: order.totalPriceSet.shopMoney.currencyCode.toUpperCase(),
    totalCents: minor(order.totalPriceSet),
    lines: order.lineItems.nodes.map((line) => ({ name: line.name, qty: line.quantity, unitPriceCents: minor(line.originalUnitPriceSet) })),
    deliveryAddress: addressLine(address),
    addressPosition: address && address.latitude !== null && address.longitude !== null ? { lat: address.latitude, lon: address.longitude } : null,
    deliveryInstructions: order.note?.trim() || null,
  };
}

/** A Shopify order in a list. */
export function orderSummaryOf(order: ShopifyOrderSummaryNode, prefix: string): ShopOrderSummary {
  return {
    orderId: orderIdOfName(order.name, prefix),
    placedAt: instant(order.createdAt),
    status: orderStatusOf(order),
    totalCents: minor(order.totalPriceSet),
    courier: latestFulfillment(order.fulfillments)?.trackingInfo[0]?.company ?? null,
  };
}

/** The order's latest shipment with tracking, or null before one exists. */
export function shipmentOf(order: Pick<ShopifyOrderNode, 'fulfillments'>): ShopShipment | null {
  const latest = latestFulfillment(order.fulfillments);
  const tracking = latest?.trackingInfo.find((t) => t.number);
  if (!latest || !tracking?.number) return null;
  return { courier: tracking.company ?? 'unknown carrier', trackingNumber: tracking.number, status: shipmentStatusOf(latest.displayStatus) };
}

// ---------------------------------------------------------------------------------------------
// Payments

/** Where casework writes its refund reason and metadata on a Shopify refund (its note), since refunds carry no metadata. */
const NOTE_MARK = 'casework:';

/** The note casework puts on a refund it makes: "casework: reason=duplicate; casework_refund_id=r1". */
export function refundNote(reason: RefundReason, metadata: Record<string, string>): string {
  const pairs = Object.entries({ reason, ...metadata }).map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
  return `${NOTE_MARK} ${pairs.join('; ')}`;
}

/** The metadata casework wrote in a refund's note (without the reason); {} for a refund made elsewhere. */
export function metadataOfNote(note: string | null): Record<string, string> {
  if (!note?.startsWith(NOTE_MARK)) return {};
  const pairs: [string, string][] = [];
  for (const pair of note.slice(NOTE_MARK.length).trim().split('; ')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    const key = decodeURIComponent(pair.slice(0, at));
    if (key !== 'reason') pairs.push([key, decodeURIComponent(pair.slice(at + 1))]);
  }
  // fromEntries defines each key as its own property (a key "__proto__" included).
  return Object.fromEntries(pairs);
}

const CHARGE_KINDS = new Set(['SALE', 'CAPTURE']);

function chargeStatus(status: string): ProviderCharge['status'] {
  return status === 'SUCCESS' ? 'captured' : status === 'FAILURE' || status === 'ERROR' ? 'failed' : 'pending';
}

/** A refund transaction's state as the port's: settled, on its way, or refused. */
export function refundStatusOf(status: string): ProviderRefund['status'] {
  return status === 'SUCCESS' ? 'succeeded' : status === 'FAILURE' || status === 'ERROR' ? 'failed' : 'pending';
}

/** One refund transaction (with the note of the refund it belongs to) as the port's refund. */
export function providerRefundOf(transaction: ShopifyTransaction, note: string | null): ProviderRefund {
  return {
    id: transaction.id,
    chargeId: transaction.parentTransaction?.id ?? '',
    amountCents: minor(transaction.amountSet),
    currency: transaction.amountSet.shopMoney.currencyCode.toUpperCase(),
    status: refundStatusOf(transaction.status),
    ...(transaction.errorCode && refundStatusOf(transaction.status) === 'failed' ? { failureReason: transaction.errorCode } : {}),
    createdAt: transaction.createdAt,
    metadata: metadataOfNote(note),
  };
}

/**
 * An order's charges (sales and captures; an authorisation with no capture yet is a pending
 * charge) and refunds (each refund transaction, with the note of its refund), with what is
 * already refunded on each charge.
 */
export function paymentsOf(order: ShopifyPaymentsNode, orderId: string): { charges: ProviderCharge[]; refunds: ProviderRefund[] } {
  const notes = new Map<string, string | null>();
  for (const refund of order.refunds) for (const t of refund.transactions.nodes) notes.set(t.id, refund.note);
  const refundTransactions = order.transactions.filter((t) => t.kind === 'REFUND');
  const refunds = refundTransactions.map((t) => providerRefundOf(t, notes.get(t.id) ?? null));
  const captured = new Set(order.transactions.filter((t) => t.kind === 'CAPTURE' && t.status === 'SUCCESS').map((t) => t.parentTransaction?.id));
  const charges = order.transactions
    .filter((t) => CHARGE_KINDS.has(t.kind) || (t.kind === 'AUTHORIZATION' && t.status === 'SUCCESS' && !captured.has(t.id)))
    .map((t): ProviderCharge => ({
      id: t.id,
      orderId,
      amountCents: minor(t.amountSet),
      currency: t.amountSet.shopMoney.currencyCode.toUpperCase(),
      status: t.kind === 'AUTHORIZATION' ? 'pending' : chargeStatus(t.status),
      refundedCents: refunds.filter((r) => r.chargeId === t.id && r.status !== 'failed').reduce((sum, r) => sum + r.amountCents, 0),
      createdAt: t.createdAt,
    }));
  return { charges, refunds };
}
