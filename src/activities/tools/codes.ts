// Raw codes from the courier, the payment processor and the order system, in words. Pure: the
// model reads words, never "DLV/DS", so it cannot misread a code it was never taught.

/** Courier tracking event codes (NorthX courier EDI feed) and what they mean. */
export const COURIER_EVENT_CODES: Readonly<Record<string, string>> = {
  MAN: 'shipping label created',
  PUP: 'collected from the warehouse',
  ARR: 'arrived at hub',
  DEP: 'left hub',
  INT: 'in transit',
  MSC: 'mis-sorted: scanned at the wrong hub',
  RRT: 'rerouted towards the correct hub',
  HLD: 'held at depot',
  OFD: 'out for delivery',
  ATT: 'delivery attempted, nobody available',
  ADX: 'exception: courier says the address is incorrect',
  CUS: 'customer contacted by the courier',
  RTS: 'being returned to the sender',
  DLV: 'delivered',
};

/** Proof-of-delivery types on a DLV event: where or to whom the parcel was left. */
export const DELIVERY_POD_TYPES: Readonly<Record<string, string>> = {
  DS: 'left at the doorstep',
  RC: 'left with a reception desk',
  NB: 'left with a neighbour',
  SG: 'signed for',
  SP: 'left in a safe place',
  HH: 'handed to the customer',
};

/** Shipment status codes (the courier's latest summary of a parcel). */
export const SHIPMENT_STATUS_CODES: Readonly<Record<string, string>> = {
  LBL: 'label created, not yet collected',
  TRN: 'in transit',
  OFD: 'out for delivery',
  DLV: 'delivered',
  EXC: 'delivery exception',
  RTS: 'being returned to the sender',
};

/** Order status codes from the order system. */
export const ORDER_STATUS_CODES: Readonly<Record<string, string>> = {
  PROC: 'processing',
  SHPD: 'shipped',
  DLVD: 'delivered',
  EXCP: 'delivery problem',
  RFND: 'refunded',
  PRFD: 'partly refunded',
  CANC: 'cancelled',
};

/** Payment processor status codes, for charges and refunds alike. */
export const PAYMENT_STATUS_CODES: Readonly<Record<string, string>> = {
  ATH: 'authorised, not yet captured',
  CPT: 'captured (money taken)',
  VDD: 'voided (no money taken)',
  DCL: 'declined',
  CBK: 'disputed by the cardholder (chargeback)',
  RFP: 'refund pending',
  RFS: 'refund settled (money returned)',
  RFF: 'refund failed',
};

/** Payment method codes from the processor. */
export const PAYMENT_METHOD_CODES: Readonly<Record<string, string>> = {
  card_visa: 'Visa card',
  card_mc: 'Mastercard',
  card_amex: 'American Express card',
  paypal: 'PayPal',
  applepay: 'Apple Pay',
  giftcard: 'gift card',
  store_credit: 'store credit',
};

/** The processor codes that mean the money actually moved. */
export const CAPTURED_CHARGE = 'CPT';
/** Refund codes that count against what can still be refunded (settled or on its way). */
export const COUNTED_REFUND_CODES: readonly string[] = ['RFS', 'RFP'];

/** A code in words from `table`; an unknown code is named as such rather than guessed at. */
export function describeCode(table: Readonly<Record<string, string>>, code: string | null | undefined): string {
  if (!code) return 'unknown';
  const words = Object.prototype.hasOwnProperty.call(table, code) ? table[code] : undefined;
  return words ?? `unrecognised code "${code}"`;
}
