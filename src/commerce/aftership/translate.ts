import type { Position, ShopTrackingEvent } from '../shop';

// AfterShip's checkpoint states (tag and subtag, aftership.com/docs/tracking, "Delivery
// Sub-statuses") in casework's neutral courier event codes (COURIER_EVENT_CODES in
// src/activities/tools/codes.ts), as the demo's courier feed is. Pure. A subtag with no neutral
// meaning is passed through as it is, so the tools name it "unrecognised" and the model reads the
// carrier's own message beside it instead of a guess.

/** One checkpoint as AfterShip returns it (the fields casework reads). */
export interface AftershipCheckpoint {
  checkpoint_time?: string;
  created_at?: string;
  location?: string | null;
  city?: string | null;
  state?: string | null;
  country_region_name?: string | null;
  coordinate?: { latitude?: number; longitude?: number } | null;
  message?: string;
  tag?: string;
  subtag?: string;
  subtag_message?: string;
}

/** What a tracking says about its delivery beyond the checkpoints. */
export interface AftershipDelivery {
  signed_by?: string | null;
  delivery_location_type?: string | null;
  proof_of_delivery?: { type?: string; url?: string }[] | null;
}

/** Subtags as courier event codes. */
const EVENT_CODE: Readonly<Record<string, string>> = {
  InfoReceived_001: 'MAN',
  InTransit_001: 'INT',
  InTransit_002: 'PUP', // acceptance scan
  InTransit_003: 'ARR', // arrival scan
  InTransit_004: 'ARR', // arrived at destination country
  InTransit_005: 'INT', // customs clearance completed
  InTransit_006: 'INT', // customs clearance started
  InTransit_007: 'DEP', // departure scan
  InTransit_008: 'INT', // problem resolved
  InTransit_009: 'RRT', // forwarded to a different delivery address
  OutForDelivery_001: 'OFD',
  OutForDelivery_003: 'CUS', // customer contacted
  OutForDelivery_004: 'CUS', // delivery appointment scheduled
  AvailableForPickup_001: 'HLD',
  AttemptFail_001: 'ATT',
  AttemptFail_002: 'ATT',
  AttemptFail_003: 'ATT',
  Delivered_001: 'DLV',
  Delivered_002: 'DLV', // picked up by the customer
  Delivered_003: 'DLV', // signed by the customer
  Delivered_004: 'DLV', // cash on delivery collected
  Delivered_005: 'DLV', // delivered to a neighbour
  Exception_006: 'HLD', // held for payment
  Exception_007: 'ADX', // incorrect address
  Exception_010: 'RTS', // returning to sender
  Exception_011: 'RTS', // returned to sender
  Exception_016: 'MSC', // delayed: processing issue (sorting error, misroute)
};

/** Tags whose subtag AfterShip did not give, by the tag's own meaning. */
const TAG_CODE: Readonly<Record<string, string>> = {
  InfoReceived: 'MAN',
  InTransit: 'INT',
  OutForDelivery: 'OFD',
  AttemptFail: 'ATT',
  Delivered: 'DLV',
  AvailableForPickup: 'HLD',
};

/** Proof-of-delivery types the delivered subtag itself says. */
const POD_BY_SUBTAG: Readonly<Record<string, string>> = {
  Delivered_002: 'HH',
  Delivered_003: 'SG',
  Delivered_004: 'HH',
  Delivered_005: 'NB',
};

/** A checkpoint's neutral event code; its subtag (or tag) as it is when it has no neutral meaning. */
export function eventCodeOf(checkpoint: Pick<AftershipCheckpoint, 'tag' | 'subtag'>): string {
  if (checkpoint.subtag && EVENT_CODE[checkpoint.subtag]) return EVENT_CODE[checkpoint.subtag]!;
  if (!checkpoint.subtag && checkpoint.tag && TAG_CODE[checkpoint.tag]) return TAG_CODE[checkpoint.tag]!;
  return checkpoint.subtag || checkpoint.tag || 'unknown';
}

/** Where the parcel was left, from AfterShip's delivery_location_type, as DELIVERY_POD_TYPES. */
export function podTypeOfLocation(locationType: string | null | undefined): string | null {
  const words = locationType?.toLowerCase() ?? '';
  if (!words) return null;
  if (/neighbo/.test(words)) return 'NB';
  if (/reception|front desk|concierge|mail ?room|lobby/.test(words)) return 'RC';
  if (/safe ?place|porch|garage|shed|back ?door|garden/.test(words)) return 'SP';
  if (/door|doorstep/.test(words)) return 'DS';
  if (/in person|customer|recipient|hand/.test(words)) return 'HH';
  return null;
}

function positionOf(checkpoint: AftershipCheckpoint): Position | null {
  const c = checkpoint.coordinate;
  return c && typeof c.latitude === 'number' && typeof c.longitude === 'number' ? { lat: c.latitude, lon: c.longitude } : null;
}

/**
 * A checkpoint as a neutral tracking event. Proof of delivery (where it was left, the photo,
 * who signed) is on the tracking, not the checkpoint: it is given to the latest delivery scan only.
 */
export function trackingEventOf(checkpoint: AftershipCheckpoint, delivery: AftershipDelivery | null): ShopTrackingEvent {
  const code = eventCodeOf(checkpoint);
  const isDelivery = code === 'DLV';
  const pod = isDelivery ? (POD_BY_SUBTAG[checkpoint.subtag ?? ''] ?? podTypeOfLocation(delivery?.delivery_location_type) ?? (delivery?.signed_by ? 'SG' : null)) : null;
  const photo = isDelivery ? (delivery?.proof_of_delivery?.find((p) => p.url && (!p.type || /photo|image/i.test(p.type)))?.url ?? null) : null;
  const place = checkpoint.location || [checkpoint.city, checkpoint.state, checkpoint.country_region_name].filter(Boolean).join(', ');
  const at = checkpoint.checkpoint_time ?? checkpoint.created_at ?? '';
  return {
    // AfterShip writes times with the carrier's offset ("2026-10-12T15:37:00+01:00"): casework's are UTC ISO instants, as every adapter gives them.
    occurredAt: Number.isNaN(Date.parse(at)) ? at : new Date(at).toISOString(),
    code,
    podType: pod,
    podPhotoUrl: photo,
    podSignature: isDelivery ? (delivery?.signed_by ?? null) : null,
    locationName: place || 'unknown location',
    description: checkpoint.message ?? checkpoint.subtag_message ?? '',
    gps: positionOf(checkpoint),
    courierNote: null,
  };
}
