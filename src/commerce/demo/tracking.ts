import type { Pool } from 'pg';
import { z } from 'zod';
import { withCustomer } from '../../db/pool';
import { firstRow, isoTimestamp } from '../../db/rows';
import type { TrackingSource } from '../shop';

// The demo shop's courier scans (the NorthX EDI feed's codes, kept as sent), newest first.

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

/** The demo shop's tracking. */
export function demoTracking(pool: Pool): TrackingSource {
  return {
    name: 'demo',
    events: (customerId, order, page) =>
      withCustomer(pool, customerId, async (client) => {
        const counted = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM tracking_events WHERE customer_id = $1 AND order_id = $2', [customerId, order.orderId]);
        const { rows } = await client.query(
          `SELECT occurred_at, code, pod_type, pod_photo_url, pod_signature, location_name, description, gps_lat, gps_lon, depot_note
             FROM tracking_events WHERE customer_id = $1 AND order_id = $2
            ORDER BY occurred_at DESC, event_id DESC LIMIT $3 OFFSET $4`,
          [customerId, order.orderId, page.limit, page.offset],
        );
        return {
          total: firstRow(counted.rows, 'count of tracking events').n,
          items: rows.map((raw) => {
            const row = EventRow.parse(raw);
            return {
              occurredAt: row.occurred_at,
              code: row.code,
              podType: row.pod_type,
              podPhotoUrl: row.pod_photo_url,
              podSignature: row.pod_signature,
              locationName: row.location_name,
              description: row.description,
              gps: row.gps_lat === null || row.gps_lon === null ? null : { lat: row.gps_lat, lon: row.gps_lon },
              courierNote: row.depot_note,
            };
          }),
        };
      }),
  };
}
