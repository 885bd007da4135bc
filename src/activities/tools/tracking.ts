import type { Commerce, ShopOrder, ShopTrackingEvent } from '../../commerce/shop';
import { COURIER_EVENT_CODES, DELIVERY_POD_TYPES, describeCode } from './codes';
import { defineTool } from './define';
import { requireOrder } from './orders';
import { describeDistance, distanceMetres, pageWindow } from './shape';

/** Tracking events per page: enough to follow a journey, small enough to clear cheaply. */
export const TRACKING_PAGE_SIZE = 5;

/** Codes scanned at the customer's door, where the GPS position says whether the driver was really there. */
const AT_THE_DOOR = new Set(['DLV', 'ATT', 'ADX']);

/** One tracking event as the model reads it. */
export interface TrackingEvent {
  at: string;
  status: string;
  location: string;
  detail: string;
  /** The courier's own note on the scan, when it sent one. */
  courier_note?: string;
}

/** get_tracking_events' result. */
export interface TrackingResult {
  order_id: string;
  events: TrackingEvent[];
  showing: string;
  next_page: number | null;
}

function gpsSentence(event: ShopTrackingEvent, order: ShopOrder): string {
  if (!event.gps) return 'no GPS position recorded';
  if (!order.addressPosition) return 'the delivery address has no map position to compare the GPS scan with';
  return `GPS scan ${describeDistance(distanceMetres(event.gps, order.addressPosition))} from the delivery address`;
}

/** The courier's words, plus what a delivery scan proves: where or to whom, photo, and how far from the address. */
export function eventDetail(event: ShopTrackingEvent, order: ShopOrder): string {
  const parts = [event.description];
  if (event.code === 'DLV') {
    const left = event.podType ? describeCode(DELIVERY_POD_TYPES, event.podType) : 'proof-of-delivery type not recorded';
    if (!event.podSignature) parts.push(`${left}, no signature`);
    else parts.push(event.podType === 'SG' ? `signed for by ${event.podSignature}` : `${left}, signed by ${event.podSignature}`);
    parts.push(`photo: ${event.podPhotoUrl ? 'yes' : 'no'}`);
  }
  if (AT_THE_DOOR.has(event.code)) parts.push(gpsSentence(event, order));
  return parts.join('; ');
}

/** get_tracking_events: page `page` of an order's courier events, newest first, codes in words. */
export async function readTracking(commerce: Pick<Commerce, 'orders' | 'tracking'>, customerId: string, orderId: string, page: number): Promise<TrackingResult> {
  const order = await requireOrder(commerce.orders, customerId, orderId);
  const read = await commerce.tracking.events(customerId, order, { offset: (page - 1) * TRACKING_PAGE_SIZE, limit: TRACKING_PAGE_SIZE });
  const window = pageWindow(read.total, page, TRACKING_PAGE_SIZE, 'events');
  const events = read.items.slice(0, TRACKING_PAGE_SIZE).map((scan) => {
    const event: TrackingEvent = {
      at: scan.occurredAt,
      status: describeCode(COURIER_EVENT_CODES, scan.code),
      location: scan.locationName,
      detail: eventDetail(scan, order),
    };
    if (scan.courierNote) event.courier_note = scan.courierNote;
    return event;
  });
  return { order_id: order.orderId, events, showing: window.showing, next_page: window.next_page };
}

/** get_tracking_events, read through the shop's order and tracking sources. */
export function createTrackingTools(deps: { commerce: Commerce }) {
  return {
    get_tracking_events: defineTool('get_tracking_events', ({ order_id, page }, context) => readTracking(deps.commerce, context.customerId, order_id, page)),
  };
}
