import { PLACES, type Parcel, type Scan } from './demo-tracking';

// The demo parcels' journeys. The disputed orders (and Priya's refunded 4471) each carry a dozen
// or more scans; the older orders a short, uneventful journey.

const van = (code: string, name: string) => ({ code, name, kind: 'VAN' as const });
const door = (code: string, name: string) => ({ code, name, kind: 'ADDRESS' as const });
const trunk = (route: string) => van(`NX-TRK${route}`, `NorthX trunk vehicle, route T-${route}`);

/** Dana's parcel: mis-sorted to Glasgow on 9 October, then "delivered" with no photo, 2.4 km away. */
const dana5102: Parcel = {
  customer_id: 'cust_dana', order_id: '5102', shipment_id: 'shp_5102', tracking_number: 'NX4100510200', route_id: 'LS6-14', weight_g: 640,
  scans: [
    { at: '2026-10-05T18:22:00Z', code: 'MAN', at_place: PLACES.warehouse, text: 'Shipping label created by the sender' },
    { at: '2026-10-06T16:05:00Z', code: 'PUP', at_place: PLACES.warehouse, text: 'Collected from the sender' },
    { at: '2026-10-06T21:40:00Z', code: 'ARR', at_place: PLACES.hub1, text: 'Arrived at NorthX Hub 1' },
    { at: '2026-10-07T03:10:00Z', code: 'DEP', at_place: PLACES.hub1, text: 'Departed NorthX Hub 1 on trunk route T-41' },
    { at: '2026-10-08T06:20:00Z', code: 'ARR', at_place: PLACES.hub4, text: 'Arrived at NorthX Hub 4' },
    { at: '2026-10-08T23:50:00Z', code: 'DEP', at_place: PLACES.hub4, text: 'Departed NorthX Hub 4 on trunk route T-77', note: 'Night shift sort; chute 14 relabel pending' },
    {
      at: '2026-10-09T07:42:00Z', code: 'MSC', at_place: PLACES.hub7,
      text: 'Mis-sorted: scanned at Hub 7 Glasgow; the routing label is for Hub 4 Leeds, depot LS6',
      note: 'Chute 14 at Hub 4 mislabelled on the 8 Oct night shift; 37 parcels affected; incident INC-88213',
    },
    { at: '2026-10-09T09:15:00Z', code: 'RRT', at_place: PLACES.hub7, text: 'Rerouted to Hub 4 Leeds on the next trunk' },
    { at: '2026-10-09T21:30:00Z', code: 'DEP', at_place: PLACES.hub7, text: 'Departed NorthX Hub 7 on trunk route T-78' },
    { at: '2026-10-10T05:55:00Z', code: 'ARR', at_place: PLACES.hub4, text: 'Arrived at NorthX Hub 4' },
    { at: '2026-10-10T18:40:00Z', code: 'DEP', at_place: PLACES.hub4, text: 'Departed NorthX Hub 4 for the delivery depot' },
    { at: '2026-10-11T06:30:00Z', code: 'ARR', at_place: PLACES.depotLS6, text: 'Arrived at the delivery depot' },
    { at: '2026-10-12T07:48:00Z', code: 'OFD', at_place: van('NX-VLS6-14', 'Delivery van LS6-14, Leeds Kirkstall'), text: 'Out for delivery' },
    {
      at: '2026-10-12T14:37:00Z', code: 'DLV', at_place: door('ADDR-LS6', 'Orchard Lane, Headingley, Leeds LS6'),
      text: 'Delivered - left at the front door', pod: 'DS', photo: null, signature: null, gps: [53.8416, -1.576],
      note: 'Driver D-2291 closed 11 stops within 6 minutes at this position; route audit requested by depot lead',
    },
  ],
};

/** Priya's order 4471: left at Block A reception, not Block B, on 14 October. */
const priya4471: Parcel = {
  customer_id: 'cust_priya', order_id: '4471', shipment_id: 'shp_4471', tracking_number: 'NX4100447100', route_id: 'W2-07', weight_g: 1850,
  scans: [
    { at: '2026-10-10T20:11:00Z', code: 'MAN', at_place: PLACES.warehouse, text: 'Shipping label created by the sender' },
    { at: '2026-10-11T15:30:00Z', code: 'PUP', at_place: PLACES.warehouse, text: 'Collected from the sender' },
    { at: '2026-10-11T22:05:00Z', code: 'ARR', at_place: PLACES.hub1, text: 'Arrived at NorthX Hub 1' },
    { at: '2026-10-12T01:40:00Z', code: 'DEP', at_place: PLACES.hub1, text: 'Departed NorthX Hub 1 on trunk route T-12' },
    { at: '2026-10-12T05:55:00Z', code: 'ARR', at_place: PLACES.hub2, text: 'Arrived at NorthX Hub 2' },
    { at: '2026-10-12T19:20:00Z', code: 'DEP', at_place: PLACES.hub2, text: 'Departed NorthX Hub 2 for the delivery depot' },
    { at: '2026-10-13T05:10:00Z', code: 'ARR', at_place: PLACES.depotW2, text: 'Arrived at the delivery depot' },
    { at: '2026-10-13T08:02:00Z', code: 'OFD', at_place: van('NX-VW2-07', 'Delivery van W2-07, London Paddington'), text: 'Out for delivery' },
    {
      at: '2026-10-13T13:46:00Z', code: 'ATT', at_place: door('ADDR-W2', 'Kingsmead Court main gate, Harrow Road, London W2'),
      text: 'Delivery attempted - no access to the building, door entry code not accepted', gps: [51.5199, -0.1897],
    },
    { at: '2026-10-13T18:30:00Z', code: 'HLD', at_place: PLACES.depotW2, text: 'Held at the depot for redelivery on the next working day' },
    { at: '2026-10-14T08:15:00Z', code: 'OFD', at_place: van('NX-VW2-07', 'Delivery van W2-07, London Paddington'), text: 'Out for delivery' },
    {
      at: '2026-10-14T12:58:00Z', code: 'DLV', at_place: door('ADDR-W2', 'Kingsmead Court, Block A reception, London W2'),
      text: 'Delivered - left with reception, Block A', pod: 'RC', signature: 'K. OSEI',
      photo: 'https://pod.northx.example/p/NX4100447100-12.jpg', gps: [51.5216, -0.1886],
      note: 'Driver: Block B entrance locked, Block A concierge accepted the parcel',
    },
  ],
};

/** Priya's new order 4620: signed for by gate security at the main gate on Friday 27 November, again not Block B. */
const priya4620: Parcel = {
  customer_id: 'cust_priya', order_id: '4620', shipment_id: 'shp_4620', tracking_number: 'NX4100462000', route_id: 'W2-07', weight_g: 2300,
  scans: [
    { at: '2026-11-25T19:40:00Z', code: 'MAN', at_place: PLACES.warehouse, text: 'Shipping label created by the sender' },
    { at: '2026-11-26T15:10:00Z', code: 'PUP', at_place: PLACES.warehouse, text: 'Collected from the sender' },
    { at: '2026-11-26T21:30:00Z', code: 'ARR', at_place: PLACES.hub1, text: 'Arrived at NorthX Hub 1' },
    { at: '2026-11-27T00:50:00Z', code: 'DEP', at_place: PLACES.hub1, text: 'Departed NorthX Hub 1 on trunk route T-12' },
    { at: '2026-11-27T02:35:00Z', code: 'INT', at_place: trunk('12'), text: 'In transit' },
    { at: '2026-11-27T04:40:00Z', code: 'ARR', at_place: PLACES.hub2, text: 'Arrived at NorthX Hub 2' },
    { at: '2026-11-27T05:25:00Z', code: 'DEP', at_place: PLACES.hub2, text: 'Departed NorthX Hub 2 for the delivery depot' },
    { at: '2026-11-27T05:50:00Z', code: 'INT', at_place: van('NX-SHW2', 'NorthX shuttle, Hub 2 to Paddington'), text: 'In transit' },
    { at: '2026-11-27T06:30:00Z', code: 'ARR', at_place: PLACES.depotW2, text: 'Arrived at the delivery depot' },
    { at: '2026-11-27T07:55:00Z', code: 'OFD', at_place: van('NX-VW2-07', 'Delivery van W2-07, London Paddington'), text: 'Out for delivery' },
    { at: '2026-11-27T08:05:00Z', code: 'CUS', at_place: PLACES.depotW2, text: 'Customer notified by text message: delivery between 10:00 and 13:00' },
    {
      at: '2026-11-27T11:20:00Z', code: 'DLV', at_place: door('ADDR-W2', 'Kingsmead Court main gate security lodge, London W2'),
      text: 'Delivered - signed for at the main gate by security', pod: 'SG',
      signature: 'GATE SECURITY', photo: 'https://pod.northx.example/p/NX4100462000-12.jpg', gps: [51.5199, -0.1897],
      note: 'Driver did not attempt Block B; gate lodge signed',
    },
  ],
};

/** Marco's order 5230: an ordinary delivery; the dispute is in the payments. */
const marco5230: Parcel = {
  customer_id: 'cust_marco', order_id: '5230', shipment_id: 'shp_5230', tracking_number: 'NX4100523000', route_id: 'M1-03', weight_g: 3900,
  scans: [
    { at: '2026-10-20T20:30:00Z', code: 'MAN', at_place: PLACES.warehouse, text: 'Shipping label created by the sender' },
    { at: '2026-10-21T15:45:00Z', code: 'PUP', at_place: PLACES.warehouse, text: 'Collected from the sender' },
    { at: '2026-10-21T22:10:00Z', code: 'ARR', at_place: PLACES.hub1, text: 'Arrived at NorthX Hub 1' },
    { at: '2026-10-22T01:30:00Z', code: 'DEP', at_place: PLACES.hub1, text: 'Departed NorthX Hub 1 on trunk route T-51' },
    { at: '2026-10-22T03:05:00Z', code: 'INT', at_place: trunk('51'), text: 'In transit' },
    { at: '2026-10-22T04:50:00Z', code: 'ARR', at_place: PLACES.hub5, text: 'Arrived at NorthX Hub 5' },
    { at: '2026-10-22T05:40:00Z', code: 'DEP', at_place: PLACES.hub5, text: 'Departed NorthX Hub 5 for the delivery depot' },
    { at: '2026-10-22T06:20:00Z', code: 'ARR', at_place: PLACES.depotM1, text: 'Arrived at the delivery depot' },
    { at: '2026-10-22T07:50:00Z', code: 'OFD', at_place: van('NX-VM1-03', 'Delivery van M1-03, Manchester Ancoats'), text: 'Out for delivery' },
    { at: '2026-10-22T08:00:00Z', code: 'CUS', at_place: PLACES.depotM1, text: 'Customer notified by text message: delivery between 12:00 and 15:00' },
    { at: '2026-10-22T12:10:00Z', code: 'ATT', at_place: door('ADDR-M1', 'Canal Street, Manchester M1'), text: 'Delivery attempted - recipient on the way down, driver waited', gps: [53.4771, -2.2369] },
    {
      at: '2026-10-22T12:16:00Z', code: 'DLV', at_place: door('ADDR-M1', 'Canal Street, Manchester M1'), text: 'Delivered - handed to the customer',
      pod: 'HH', signature: 'M BIANCHI', photo: 'https://pod.northx.example/p/NX4100523000-12.jpg', gps: [53.4771, -2.2369],
    },
  ],
};

/** Leila's order 5317: "address incorrect" twice, then returned, though the address is her usual one. */
const leila5317: Parcel = {
  customer_id: 'cust_leila', order_id: '5317', shipment_id: 'shp_5317', tracking_number: 'NX4100531700', route_id: 'BS5-09', weight_g: 1100,
  scans: [
    { at: '2026-10-22T17:00:00Z', code: 'MAN', at_place: PLACES.warehouse, text: 'Shipping label created by the sender' },
    { at: '2026-10-23T15:20:00Z', code: 'PUP', at_place: PLACES.warehouse, text: 'Collected from the sender' },
    { at: '2026-10-23T21:50:00Z', code: 'ARR', at_place: PLACES.hub1, text: 'Arrived at NorthX Hub 1' },
    { at: '2026-10-24T02:05:00Z', code: 'DEP', at_place: PLACES.hub1, text: 'Departed NorthX Hub 1 on trunk route T-62' },
    { at: '2026-10-24T06:40:00Z', code: 'ARR', at_place: PLACES.hub6, text: 'Arrived at NorthX Hub 6' },
    { at: '2026-10-24T20:15:00Z', code: 'DEP', at_place: PLACES.hub6, text: 'Departed NorthX Hub 6 for the delivery depot' },
    { at: '2026-10-25T05:30:00Z', code: 'ARR', at_place: PLACES.depotBS5, text: 'Arrived at the delivery depot' },
    { at: '2026-10-26T08:10:00Z', code: 'OFD', at_place: van('NX-VBS5-09', 'Delivery van BS5-09, Bristol Easton'), text: 'Out for delivery' },
    {
      at: '2026-10-26T11:42:00Z', code: 'ADX', at_place: door('ADDR-BS5', 'Rosebank Road, Bristol BS5'),
      text: 'Exception - address incorrect: property number 22 not found', gps: [51.465, -2.56],
      note: 'Route planner geocoded BS5 6RT to Rosebank Road, not Rosebank Terrace; driver found no number 22',
    },
    { at: '2026-10-26T11:50:00Z', code: 'CUS', at_place: PLACES.depotBS5, text: 'Customer contact attempted by text message - no reply recorded' },
    { at: '2026-10-26T17:30:00Z', code: 'HLD', at_place: PLACES.depotBS5, text: 'Held at the depot - awaiting an address correction' },
    {
      at: '2026-10-27T12:05:00Z', code: 'ADX', at_place: door('ADDR-BS5', 'Rosebank Road, Bristol BS5'),
      text: 'Exception - address incorrect: second attempt, property not found', gps: [51.465, -2.56],
    },
    { at: '2026-10-28T09:00:00Z', code: 'RTS', at_place: PLACES.depotBS5, text: 'Returning to the sender - address incorrect' },
  ],
};

/** A quiet six-scan journey (five scans and the delivery) for an older, undisputed order. */
function quietJourney(p: Omit<Parcel, 'scans'>, start: string, hub: Scan['at_place'], depot: Scan['at_place'], delivered: Scan): Parcel {
  const t = (hours: number) => new Date(Date.parse(start) + hours * 3_600_000).toISOString();
  return {
    ...p,
    scans: [
      { at: t(0), code: 'MAN', at_place: PLACES.warehouse, text: 'Shipping label created by the sender' },
      { at: t(20), code: 'PUP', at_place: PLACES.warehouse, text: 'Collected from the sender' },
      { at: t(30), code: 'ARR', at_place: hub, text: 'Arrived at the hub' },
      { at: t(36), code: 'ARR', at_place: depot, text: 'Arrived at the delivery depot' },
      { at: t(38), code: 'OFD', at_place: depot, text: 'Out for delivery' },
      delivered,
    ],
  };
}

const LS6_DOOR = door('ADDR-LS6', 'Orchard Lane, Headingley, Leeds LS6');
const DANA_GPS: [number, number] = [53.8201, -1.5761];

/** Every demo parcel, disputed ones first. */
export const DEMO_PARCELS: Parcel[] = [
  dana5102,
  priya4471,
  priya4620,
  marco5230,
  leila5317,
  quietJourney(
    { customer_id: 'cust_priya', order_id: '4102', shipment_id: 'shp_4102', tracking_number: 'NX4100410200', route_id: 'W2-07', weight_g: 1400 },
    '2026-03-02T18:00:00Z', PLACES.hub2, PLACES.depotW2,
    { at: '2026-03-04T13:05:00Z', code: 'DLV', at_place: door('ADDR-W2', 'Kingsmead Court, Block B lobby, London W2'), text: 'Delivered - left in the lobby', pod: 'SP', photo: 'https://pod.northx.example/p/NX4100410200-06.jpg', gps: [51.5211, -0.1871] },
  ),
  quietJourney(
    { customer_id: 'cust_priya', order_id: '4315', shipment_id: 'shp_4315', tracking_number: 'NX4100431500', route_id: 'W2-07', weight_g: 600 },
    '2026-07-06T17:00:00Z', PLACES.hub2, PLACES.depotW2,
    { at: '2026-07-08T12:40:00Z', code: 'DLV', at_place: door('ADDR-W2', 'Kingsmead Court, Block A reception, London W2'), text: 'Delivered - left with reception', pod: 'RC', signature: 'RECEPTION', photo: 'https://pod.northx.example/p/NX4100431500-06.jpg', gps: [51.5216, -0.1886] },
  ),
  quietJourney(
    { customer_id: 'cust_dana', order_id: '3388', shipment_id: 'shp_3388', tracking_number: 'NX4100338800', route_id: 'LS6-14', weight_g: 820 },
    '2025-11-20T18:00:00Z', PLACES.hub4, PLACES.depotLS6,
    { at: '2025-11-22T12:10:00Z', code: 'DLV', at_place: LS6_DOOR, text: 'Delivered - handed to the customer', pod: 'HH', signature: 'D WHITFIELD', photo: 'https://pod.northx.example/p/NX4100338800-06.jpg', gps: DANA_GPS },
  ),
  quietJourney(
    { customer_id: 'cust_dana', order_id: '3741', shipment_id: 'shp_3741', tracking_number: 'NX4100374100', route_id: 'LS6-14', weight_g: 540 },
    '2026-01-08T20:30:00Z', PLACES.hub4, PLACES.depotLS6,
    { at: '2026-01-10T14:45:00Z', code: 'DLV', at_place: door('ADDR-LS6', 'Orchard Lane, Headingley, Leeds LS6 (neighbour, number 16)'), text: 'Delivered - left with a neighbour at number 16', pod: 'NB', signature: 'R PATEL', photo: 'https://pod.northx.example/p/NX4100374100-06.jpg', gps: [53.82015, -1.5759] },
  ),
  quietJourney(
    { customer_id: 'cust_dana', order_id: '4105', shipment_id: 'shp_4105', tracking_number: 'NX4100410500', route_id: 'LS6-14', weight_g: 760 },
    '2026-03-01T21:30:00Z', PLACES.hub4, PLACES.depotLS6,
    { at: '2026-03-03T16:20:00Z', code: 'DLV', at_place: LS6_DOOR, text: 'Delivered - handed to the customer', pod: 'HH', signature: 'D WHITFIELD', photo: 'https://pod.northx.example/p/NX4100410500-06.jpg', gps: DANA_GPS },
  ),
  quietJourney(
    { customer_id: 'cust_dana', order_id: '4996', shipment_id: 'shp_4996', tracking_number: 'NX4100499600', route_id: 'LS6-14', weight_g: 210 },
    '2026-08-18T17:40:00Z', PLACES.hub4, PLACES.depotLS6,
    { at: '2026-08-20T10:05:00Z', code: 'DLV', at_place: door('ADDR-LS6', 'Orchard Lane, Headingley, Leeds LS6 (neighbour, number 16)'), text: 'Delivered - left with a neighbour at number 16', pod: 'NB', signature: 'R PATEL', photo: 'https://pod.northx.example/p/NX4100499600-06.jpg', gps: [53.82015, -1.5759] },
  ),
  quietJourney(
    { customer_id: 'cust_marco', order_id: '4412', shipment_id: 'shp_4412', tracking_number: 'NX4100441200', route_id: 'M1-03', weight_g: 1300 },
    '2026-06-01T18:30:00Z', PLACES.hub5, PLACES.depotM1,
    { at: '2026-06-03T11:40:00Z', code: 'DLV', at_place: door('ADDR-M1', 'Canal Street, Manchester M1'), text: 'Delivered - handed to the customer', pod: 'HH', signature: 'M BIANCHI', photo: 'https://pod.northx.example/p/NX4100441200-06.jpg', gps: [53.4771, -2.2369] },
  ),
  quietJourney(
    { customer_id: 'cust_leila', order_id: '4188', shipment_id: 'shp_4188', tracking_number: 'NX4100418800', route_id: 'BS5-09', weight_g: 950 },
    '2026-04-14T18:20:00Z', PLACES.hub6, PLACES.depotBS5,
    { at: '2026-04-16T13:30:00Z', code: 'DLV', at_place: door('ADDR-BS5', 'Rosebank Terrace, Bristol BS5'), text: 'Delivered - handed to the customer', pod: 'HH', signature: 'L HADDAD', photo: 'https://pod.northx.example/p/NX4100418800-06.jpg', gps: [51.4621, -2.5641] },
  ),
  quietJourney(
    { customer_id: 'cust_dana', order_id: '4870', shipment_id: 'shp_4870', tracking_number: 'NX4100487000', route_id: 'LS6-14', weight_g: 900 },
    '2026-05-15T18:00:00Z', PLACES.hub4, PLACES.depotLS6,
    { at: '2026-05-17T11:30:00Z', code: 'DLV', at_place: LS6_DOOR, text: 'Delivered - handed to the customer', pod: 'HH', signature: 'D WHITFIELD', photo: 'https://pod.northx.example/p/NX4100487000-06.jpg', gps: DANA_GPS },
  ),
  quietJourney(
    { customer_id: 'cust_marco', order_id: '4990', shipment_id: 'shp_4990', tracking_number: 'NX4100499000', route_id: 'M1-03', weight_g: 700 },
    '2026-08-10T18:00:00Z', PLACES.hub5, PLACES.depotM1,
    { at: '2026-08-12T10:15:00Z', code: 'DLV', at_place: door('ADDR-M1', 'Canal Street, Manchester M1'), text: 'Delivered - handed to the customer', pod: 'HH', signature: 'M BIANCHI', photo: 'https://pod.northx.example/p/NX4100499000-06.jpg', gps: [53.4771, -2.2369] },
  ),
  quietJourney(
    { customer_id: 'cust_leila', order_id: '4733', shipment_id: 'shp_4733', tracking_number: 'NX4100473300', route_id: 'BS5-09', weight_g: 500 },
    '2026-09-01T18:00:00Z', PLACES.hub6, PLACES.depotBS5,
    { at: '2026-09-03T14:20:00Z', code: 'DLV', at_place: door('ADDR-BS5', 'Rosebank Terrace, Bristol BS5'), text: 'Delivered - left at the front door', pod: 'DS', photo: 'https://pod.northx.example/p/NX4100473300-06.jpg', gps: [51.4621, -2.5641] },
  ),
];
