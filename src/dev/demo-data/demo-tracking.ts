// Courier tracking for the demo orders, written as short scan lists and expanded into the
// verbose rows a real courier EDI feed delivers (envelopes, scanner telemetry, audit fields),
// so the measurement of result shaping is against realistic raw data.

/** A place a parcel can be scanned. */
interface Place {
  code: string;
  name: string;
  kind: 'WAREHOUSE' | 'HUB' | 'DEPOT' | 'VAN' | 'ADDRESS';
  lat: number;
  lon: number;
}

const place = (code: string, name: string, kind: Place['kind'], lat: number, lon: number): Place => ({ code, name, kind, lat, lon });

/** The courier network the demo parcels travel through. */
export const PLACES = {
  warehouse: place('WH-DAV1', 'Cartwise warehouse, Daventry', 'WAREHOUSE', 52.2561, -1.164),
  hub1: place('NX-HUB1', 'NorthX Hub 1, Midlands (Daventry)', 'HUB', 52.2712, -1.1503),
  hub2: place('NX-HUB2', 'NorthX Hub 2, London West (Park Royal)', 'HUB', 51.529, -0.27),
  hub4: place('NX-HUB4', 'NorthX Hub 4, Leeds (Cross Green)', 'HUB', 53.7871, -1.512),
  hub5: place('NX-HUB5', 'NorthX Hub 5, Manchester (Trafford Park)', 'HUB', 53.466, -2.318),
  hub6: place('NX-HUB6', 'NorthX Hub 6, Bristol (Avonmouth)', 'HUB', 51.503, -2.699),
  hub7: place('NX-HUB7', 'NorthX Hub 7, Glasgow (Eurocentral)', 'HUB', 55.845, -3.985),
  depotW2: place('NX-DW2', 'NorthX delivery depot, London Paddington', 'DEPOT', 51.517, -0.177),
  depotLS6: place('NX-DLS6', 'NorthX delivery depot, Leeds Kirkstall', 'DEPOT', 53.811, -1.599),
  depotM1: place('NX-DM1', 'NorthX delivery depot, Manchester Ancoats', 'DEPOT', 53.484, -2.226),
  depotBS5: place('NX-DBS5', 'NorthX delivery depot, Bristol Easton', 'DEPOT', 51.46, -2.562),
} as const;

/** One scan as the story tells it; everything else in the row is derived. */
export interface Scan {
  at: string;
  code: string;
  at_place: Place | { code: string; name: string; kind: Place['kind'] };
  text: string;
  pod?: 'DS' | 'RC' | 'NB' | 'SG' | 'SP' | 'HH';
  photo?: string | null;
  signature?: string | null;
  /** Where the scanner's GPS put it; defaults to the place's own coordinates. */
  gps?: [number, number] | null;
  note?: string;
}

/** A parcel: its shipment identity and scans in time order. */
export interface Parcel {
  customer_id: string;
  order_id: string;
  shipment_id: string;
  tracking_number: string;
  route_id: string;
  weight_g: number;
  scans: Scan[];
}

/** A tracking_events row exactly as the migration defines it. */
export interface TrackingEventRow {
  event_id: string;
  customer_id: string;
  shipment_id: string;
  order_id: string;
  occurred_at: string;
  code: string;
  pod_type: string | null;
  pod_photo_url: string | null;
  pod_signature: string | null;
  location_code: string;
  location_name: string;
  description: string;
  scanner_id: string | null;
  route_id: string | null;
  gps_lat: number | null;
  gps_lon: number | null;
  depot_note: string | null;
  raw_payload: unknown;
  received_at: string;
}

/** Deterministic pseudo-telemetry: the same seed always yields the same digits (idempotent seeding). */
export function digits(seed: string, n: number): string {
  let h = 2166136261;
  for (const ch of seed) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  return String(h).padStart(10, '0').slice(-n);
}

/** An ISO timestamp `seconds` later. */
export function plusSeconds(iso: string, seconds: number): string {
  return new Date(Date.parse(iso) + seconds * 1000).toISOString();
}

/** Expands a parcel's scans into full tracking_events rows. */
export function trackingRows(parcel: Parcel): TrackingEventRow[] {
  return parcel.scans.map((scan, i) => {
    const seq = String(i + 1).padStart(2, '0');
    const eventId = `${parcel.tracking_number}-${seq}`;
    const fixed = 'lat' in scan.at_place ? ([scan.at_place.lat, scan.at_place.lon] as [number, number]) : null;
    const gps = scan.gps === undefined ? fixed : scan.gps;
    const scannerId = `ZT-${scan.at_place.code.replace(/[^A-Z0-9]/g, '')}-${digits(eventId, 4)}`;
    return {
      event_id: eventId,
      customer_id: parcel.customer_id,
      shipment_id: parcel.shipment_id,
      order_id: parcel.order_id,
      occurred_at: scan.at,
      code: scan.code,
      pod_type: scan.pod ?? null,
      pod_photo_url: scan.photo ?? null,
      pod_signature: scan.signature ?? null,
      location_code: scan.at_place.code,
      location_name: scan.at_place.name,
      description: scan.text,
      scanner_id: scannerId,
      route_id: parcel.route_id,
      gps_lat: gps ? gps[0] : null,
      gps_lon: gps ? gps[1] : null,
      depot_note: scan.note ?? null,
      received_at: plusSeconds(scan.at, 40 + Number(digits(eventId, 2))),
      raw_payload: {
        edi: {
          standard: 'IFTSTA',
          version: 'D.21B',
          sender_id: 'NRTHX-GB-01',
          recipient_id: 'CARTWISE-OPS',
          interchange_ref: `ICR${digits(eventId + 'icr', 9)}`,
          message_ref: `MSG${digits(eventId + 'msg', 8)}`,
          test_indicator: false,
          sent_at: plusSeconds(scan.at, 12),
        },
        consignment: {
          tracking_number: parcel.tracking_number,
          barcode: `JJD000${digits(parcel.tracking_number, 10)}`,
          service: 'NX48-STD',
          piece_count: 1,
          piece_seq: 1,
          declared_weight_g: parcel.weight_g,
          volumetric_weight_g: Math.round(parcel.weight_g * 1.35),
          customs: null,
        },
        status: {
          code: scan.code,
          sub_code: scan.pod ?? null,
          reason_code: scan.code === 'ADX' ? 'ADDR-NF-07' : scan.code === 'MSC' ? 'SORT-ERR-22' : null,
          free_text: scan.text,
          language: 'en-GB',
        },
        location: {
          code: scan.at_place.code,
          name: scan.at_place.name,
          type: scan.at_place.kind,
          country: 'GB',
          unlocode: scan.at_place.kind === 'HUB' ? `GB${scan.at_place.code.slice(-4)}` : null,
        },
        device: {
          scanner_id: scannerId,
          model: 'Zebra TC58',
          firmware: 'ZT-11.4.2-nx',
          battery_pct: 20 + (Number(digits(eventId + 'bat', 2)) % 80),
          operator_id: `OP${digits(eventId + 'op', 5)}`,
          app_version: 'nx-handheld 8.3.1 (build 20261002)',
        },
        geo: gps ? { lat: gps[0], lon: gps[1], accuracy_m: 4 + Number(digits(eventId + 'acc', 1)), fix: '3D', source: 'GNSS' } : null,
        proof_of_delivery:
          scan.code === 'DLV'
            ? { type: scan.pod ?? null, photo_url: scan.photo ?? null, signature_name: scan.signature ?? null, signature_svg_ref: scan.signature ? `sig/${eventId}.svg` : null }
            : null,
        sla: { promised_by: null, on_time: scan.code !== 'MSC' && scan.code !== 'ADX', clock_stopped: scan.code === 'DLV' },
        audit: {
          ingest_batch: `B${scan.at.slice(0, 10).replace(/-/g, '')}-${digits(eventId + 'b', 3)}`,
          ingest_node: `edi-ingest-${1 + (Number(digits(eventId, 1)) % 4)}`,
          checksum: digits(eventId + 'sum', 10) + digits(eventId + 'sum2', 10),
          duplicate_of: null,
        },
      },
    };
  });
}

/** A shipments row exactly as the migration defines it. */
export interface ShipmentRow {
  shipment_id: string;
  customer_id: string;
  order_id: string;
  courier: string;
  tracking_number: string;
  status_code: string;
  service_level: string;
  label_id: string;
  origin_depot: string;
  route_id: string;
  weight_g: number;
  dims_mm: string;
  internal_notes: string | null;
  created_at: string;
}

// The courier's summary status follows its latest scan (SHIPMENT_STATUS_CODES in codes.ts).
const SHIPMENT_STATUS_BY_SCAN: Readonly<Record<string, string>> = { MAN: 'LBL', OFD: 'OFD', DLV: 'DLV', ADX: 'EXC', RTS: 'RTS' };

/** The shipments row for a parcel: NorthX, status from its latest scan, created at its first. */
export function shipmentRow(parcel: Parcel): ShipmentRow {
  const [first] = parcel.scans;
  const last = parcel.scans.at(-1);
  if (!first || !last) throw new Error(`parcel ${parcel.shipment_id} has no scans`);
  return {
    shipment_id: parcel.shipment_id,
    customer_id: parcel.customer_id,
    order_id: parcel.order_id,
    courier: 'NorthX',
    tracking_number: parcel.tracking_number,
    status_code: SHIPMENT_STATUS_BY_SCAN[last.code] ?? 'TRN',
    service_level: 'NX48-STD',
    label_id: `LBL-${digits(parcel.tracking_number + 'lbl', 8)}`,
    origin_depot: PLACES.warehouse.code,
    route_id: parcel.route_id,
    weight_g: parcel.weight_g,
    dims_mm: parcel.weight_g > 2000 ? '420x320x260' : parcel.weight_g > 800 ? '350x250x160' : '260x190x90',
    internal_notes: parcel.scans.some((s) => s.code === 'MSC' || s.code === 'ADX') ? `Exception raised on route ${parcel.route_id}; see depot notes on the scans` : null,
    created_at: first.at,
  };
}
