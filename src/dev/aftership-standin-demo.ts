import { DEMO_PARCELS } from './demo-data/demo-parcels';
import { trackingRows } from './demo-data/demo-tracking';
import type { AftershipStandin, StandinCheckpoint } from './aftership-standin';

// The demo's NorthX parcels as AfterShip tracks them: each scan a checkpoint with the tag and
// subtag AfterShip's documentation gives that kind of scan ("Delivery Sub-statuses"), proof of
// delivery on the tracking, so the same investigations run against the AfterShip adapter as
// against the demo's courier feed.

/** The demo's courier codes as AfterShip's subtags (and their messages). */
const SUBTAG: Readonly<Record<string, [subtag: string, message: string]>> = {
  MAN: ['InfoReceived_001', 'Info Received'],
  PUP: ['InTransit_002', 'Acceptance scan'],
  ARR: ['InTransit_003', 'Arrival scan'],
  DEP: ['InTransit_007', 'Departure Scan'],
  INT: ['InTransit_001', 'In Transit'],
  MSC: ['Exception_016', 'Delayed (Processing issue)'],
  RRT: ['InTransit_009', 'Forwarded to a different delivery address'],
  HLD: ['AvailableForPickup_001', 'Available for pickup'],
  OFD: ['OutForDelivery_001', 'Out for Delivery'],
  ATT: ['AttemptFail_001', 'Failed Attempt'],
  ADX: ['Exception_007', 'Incorrect Address'],
  CUS: ['OutForDelivery_003', 'Customer contacted'],
  RTS: ['Exception_010', 'Returning to sender'],
  DLV: ['Delivered_001', 'Delivered'],
};

/** Where a demo parcel was left, as AfterShip's delivered subtag or delivery_location_type says it. */
const DELIVERED: Readonly<Record<string, { subtag?: [string, string]; locationType?: string }>> = {
  NB: { subtag: ['Delivered_005', 'Delivered to neighbor'] },
  SG: { subtag: ['Delivered_003', 'Sign by customer'] },
  HH: { subtag: ['Delivered_002', 'Picked up by the customer'] },
  DS: { locationType: 'Front Door' },
  RC: { locationType: 'Reception' },
  SP: { locationType: 'Safe Place' },
};

/** Adds every demo parcel to the stand-in as a tracking with the demo order id. */
export function seedDemoTracking(standin: AftershipStandin): void {
  for (const parcel of DEMO_PARCELS) {
    const rows = trackingRows(parcel);
    const delivered = rows.filter((r) => r.code === 'DLV').at(-1);
    const pod = delivered?.pod_type ? DELIVERED[delivered.pod_type] : undefined;
    const checkpoints = rows.map((row): StandinCheckpoint => {
      const [subtag, message] = row.code === 'DLV' && pod?.subtag ? pod.subtag : (SUBTAG[row.code] ?? ['Exception_001', 'Exception']);
      return {
        checkpoint_time: row.occurred_at,
        created_at: row.received_at,
        slug: 'northx',
        location: row.location_name,
        city: null,
        state: null,
        country_region: 'GBR',
        country_region_name: 'United Kingdom',
        coordinate: row.gps_lat !== null && row.gps_lon !== null ? { latitude: row.gps_lat, longitude: row.gps_lon } : null,
        message: row.description,
        tag: subtag.split('_')[0]!,
        subtag,
        subtag_message: message,
        raw_tag: row.code,
        source: 'carrier',
      };
    });
    standin.addTracking({
      tracking_number: parcel.tracking_number,
      slug: 'northx',
      order_id: parcel.order_id,
      order_number: `#${parcel.order_id}`,
      signed_by: delivered?.pod_signature ?? null,
      delivery_location_type: pod?.locationType ?? null,
      proof_of_delivery: delivered?.pod_photo_url ? [{ type: 'photo', url: delivered.pod_photo_url }] : null,
      checkpoints,
    });
  }
}
