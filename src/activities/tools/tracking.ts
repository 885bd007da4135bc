import type { Pool, PoolClient } from 'pg';
import { z } from 'zod';
import { COURIER_EVENT_CODES, DELIVERY_POD_TYPES, describeCode } from './codes';
import { defineTool } from './define';
import { requireOrder, type OrderRow } from './orders';
import { withCustomer } from '../../db/pool';
import { firstRow, isoTimestamp } from '../../db/rows';
import { describeDistance, distanceMetres, pageWindow } from './shape';

/** Tracking events per page: enough to follow a journey, small enough to clear cheaply. */
export const TRACKING_PAGE_SIZE = 5;

/** Codes scanned at the customer's door, where the GPS position says whether the driver was really there. */
const AT_THE_DOOR = new Set(['DLV', 'ATT', 'ADX']);

const EventRow = z.object({
  occurred_at: isoTimestamp,
  code: z.string(),
  pod_type: z.string().nullable(),
  pod_photo_url: z.string().nullable(),
  pod_signature: z.string().nullable(),
  location_name: z.string(),
  description: z.string(),
  gps_lat: z.number().nullable(),
  gps_lon: z.number().nullable(),
  depot_note: z.string().nullable(),
});
type EventRow = z.infer<typeof EventRow>;

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

function gpsSentence(row: EventRow, order: OrderRow): string {
  if (row.gps_lat === null || row.gps_lon === null) return 'no GPS position recorded';
  if (order.address_lat === null || order.address_lon === null) return 'the delivery address has no map position to compare the GPS scan with';
  const metres = distanceMetres({ lat: row.gps_lat, lon: row.gps_lon }, { lat: order.address_lat, lon: order.address_lon });
  return `GPS scan ${describeDistance(metres)} from the delivery address`;
}

/** The courier's words, plus what a delivery scan proves: where or to whom, photo, and how far from the address. */
export function eventDetail(row: EventRow, order: OrderRow): string {
  const parts = [row.description];
  if (row.code === 'DLV') {
    const left = row.pod_type ? describeCode(DELIVERY_POD_TYPES, row.pod_type) : 'proof-of-delivery type not recorded';
    if (!row.pod_signature) parts.push(`${left}, no signature`);
    else parts.push(row.pod_type === 'SG' ? `signed for by ${row.pod_signature}` : `${left}, signed by ${row.pod_signature}`);
    parts.push(`photo: ${row.pod_photo_url ? 'yes' : 'no'}`);
  }
  if (AT_THE_DOOR.has(row.code)) parts.push(gpsSentence(row, order));
  return parts.join('; ');
}

/** get_tracking_events: page `page` of an order's courier events, newest first, codes in words. */
export async function readTracking(client: PoolClient, customerId: string, orderId: string, page: number): Promise<TrackingResult> {
  const order = await requireOrder(client, customerId, orderId);
  const counted = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM tracking_events WHERE customer_id = $1 AND order_id = $2', [customerId, orderId]);
  const window = pageWindow(firstRow(counted.rows, 'count of tracking events').n, page, TRACKING_PAGE_SIZE, 'events');
  const { rows } = await client.query(
    `SELECT occurred_at, code, pod_type, pod_photo_url, pod_signature, location_name, description, gps_lat, gps_lon, depot_note
       FROM tracking_events WHERE customer_id = $1 AND order_id = $2
      ORDER BY occurred_at DESC, event_id DESC LIMIT $3 OFFSET $4`,
    [customerId, orderId, window.limit, window.offset],
  );
  const events = rows.map((raw) => {
    const row = EventRow.parse(raw);
    const event: TrackingEvent = {
      at: row.occurred_at,
      status: describeCode(COURIER_EVENT_CODES, row.code),
      location: row.location_name,
      detail: eventDetail(row, order),
    };
    if (row.depot_note) event.courier_note = row.depot_note;
    return event;
  });
  return { order_id: order.order_id, events, showing: window.showing, next_page: window.next_page };
}

/** get_tracking_events over one pool. */
export function createTrackingTools(deps: { pool: Pool }) {
  return {
    get_tracking_events: defineTool('get_tracking_events', ({ order_id, page }, context) =>
      withCustomer(deps.pool, context.customerId, (client) => readTracking(client, context.customerId, order_id, page)),
    ),
  };
}
