// The demo shop's records besides courier tracking: customers, orders, earlier tickets, payments
// and policies, written as short stories and expanded into rows as verbose as the upstream
// systems send (ERP fields, processor envelopes, quoted email threads), so that shaping in the
// tools is measured against realistic raw data. Every value is fixed: seeding is repeatable.

import { digits, plusSeconds } from './demo-tracking';

/** A customers row exactly as the migration defines it. */
export interface CustomerRow {
  customer_id: string;
  name: string;
  email: string;
  phone: string | null;
  default_address: string;
  address_lat: number | null;
  address_lon: number | null;
  loyalty_tier: string | null;
  crm_segment: string | null;
  risk_score: number | null;
  marketing_opt_in: boolean;
  internal_notes: string | null;
  created_at: string;
}

/** One line of an order as the order system stores it. */
export interface OrderItem {
  sku: string;
  name: string;
  qty: number;
  unit_price_cents: number;
  tax_cents: number;
  warehouse_bin: string;
  supplier_ref: string;
  hs_code: string;
  weight_g: number;
  discount_cents: number;
  gift_wrap: boolean;
}

/** An orders row exactly as the migration defines it. */
export interface OrderRow {
  order_id: string;
  customer_id: string;
  placed_at: string;
  status_code: string;
  currency: string;
  total_cents: number;
  items: OrderItem[];
  delivery_address: string;
  address_lat: number | null;
  address_lon: number | null;
  delivery_instructions: string | null;
  channel: string | null;
  warehouse_code: string | null;
  fraud_score: number | null;
  erp_ref: string | null;
  internal_notes: string | null;
  updated_at: string;
}

/** A support_tickets row exactly as the migration defines it. */
export interface TicketRow {
  ticket_id: string;
  customer_id: string;
  order_id: string | null;
  opened_at: string;
  closed_at: string | null;
  subject: string;
  body: string;
  status: string;
  channel: string | null;
  assigned_agent: string | null;
  internal_tags: string[];
  sentiment_score: number | null;
  sla_breached: boolean;
}

/** A payments row exactly as the migration defines it. */
export interface PaymentRow {
  payment_id: string;
  customer_id: string;
  order_id: string;
  kind: 'charge' | 'refund';
  amount_cents: number;
  currency: string;
  processor_code: string;
  processor_ref: string;
  method_code: string;
  avs_result: string | null;
  cvv_result: string | null;
  acquirer_response: string | null;
  risk_flags: string[];
  raw_response: unknown;
  created_at: string;
}

/** A policies row exactly as the migration defines it. */
export interface PolicyRow {
  topic: string;
  title: string;
  body: string;
  keywords: string[];
  owner_team: string | null;
  revision: number;
  legal_review_notes: string | null;
  updated_at: string;
}

// ---------------------------------------------------------------------------------------------
// Customers

interface Person {
  id: string;
  name: string;
  first: string;
  email: string;
  phone: string;
  address: string;
  lat: number;
  lon: number;
  method: string;
  card: { brand: string; last4: string } | null;
}

const DANA: Person = {
  id: 'cust_dana',
  name: 'Dana Whitfield',
  first: 'Dana',
  email: 'dana.whitfield@example.com',
  phone: '+44 7700 900412',
  address: '14 Orchard Lane, Headingley, Leeds LS6 3PL',
  lat: 53.8201,
  lon: -1.5761,
  method: 'card_visa',
  card: { brand: 'visa', last4: '4242' },
};
const PRIYA: Person = {
  id: 'cust_priya',
  name: 'Priya Raman',
  first: 'Priya',
  email: 'priya.raman@example.com',
  phone: '+44 7700 900733',
  address: 'Flat 12, Block B, Kingsmead Court, Harrow Road, London W2 5TS',
  lat: 51.521,
  lon: -0.1873,
  method: 'applepay',
  card: { brand: 'mastercard', last4: '8810' },
};
const MARCO: Person = {
  id: 'cust_marco',
  name: 'Marco Bianchi',
  first: 'Marco',
  email: 'marco.bianchi@example.com',
  phone: '+44 7700 900158',
  address: 'Flat 5, 41 Canal Street, Manchester M1 3HE',
  lat: 53.4771,
  lon: -2.2369,
  method: 'card_mc',
  card: { brand: 'mastercard', last4: '5100' },
};
const LEILA: Person = {
  id: 'cust_leila',
  name: 'Leila Haddad',
  first: 'Leila',
  email: 'leila.haddad@example.com',
  phone: '+44 7700 900964',
  address: '22 Rosebank Terrace, Bristol BS5 6RT',
  lat: 51.4621,
  lon: -2.5641,
  method: 'paypal',
  card: null,
};

/** The demo's people, by short name. */
export const PEOPLE = { dana: DANA, priya: PRIYA, marco: MARCO, leila: LEILA } as const;

/** The demo customers' rows. */
export const CUSTOMERS: CustomerRow[] = [
  {
    p: DANA,
    tier: 'gold',
    segment: 'outdoor-regular',
    risk: 0.08,
    optIn: true,
    notes: 'Prefers email. Asked in June 2026 for parcels to go to the neighbour at number 16, never the doorstep.',
    since: '2024-03-11T09:14:00Z',
  },
  {
    p: PRIYA,
    tier: 'silver',
    segment: 'home-kitchen',
    risk: 0.04,
    optIn: false,
    notes: 'Lives in Block B; the estate has blocks A to D and a staffed main gate.',
    since: '2025-01-20T19:02:00Z',
  },
  { p: MARCO, tier: 'bronze', segment: 'diy-tools', risk: 0.11, optIn: true, notes: null, since: '2025-09-02T12:40:00Z' },
  {
    p: LEILA,
    tier: 'silver',
    segment: 'home-textiles',
    risk: 0.06,
    optIn: false,
    notes: 'Same address since signing up; several successful deliveries.',
    since: '2025-06-17T08:25:00Z',
  },
].map(({ p, tier, segment, risk, optIn, notes, since }) => ({
  customer_id: p.id,
  name: p.name,
  email: p.email,
  phone: p.phone,
  default_address: p.address,
  address_lat: p.lat,
  address_lon: p.lon,
  loyalty_tier: tier,
  crm_segment: segment,
  risk_score: risk,
  marketing_opt_in: optIn,
  internal_notes: notes,
  created_at: since,
}));

// ---------------------------------------------------------------------------------------------
// Orders

interface OrderStory {
  id: string;
  who: Person;
  placed: string;
  status: string;
  lines: [sku: string, name: string, qty: number, unitPriceCents: number][];
  instructions?: string;
  channel?: string;
  notes?: string;
  updated?: string;
}

const ORDER_STORIES: OrderStory[] = [
  // Dana: five uneventful orders, then 5102, "delivered" 2.4 km away and never received.
  { id: '3388', who: DANA, placed: '2025-11-20T17:40:00Z', status: 'DLVD', lines: [['CW-JKT-2210-M', "Stormline waterproof rain jacket, women's M", 1, 6500]] },
  {
    id: '3741',
    who: DANA,
    placed: '2026-01-08T20:15:00Z',
    status: 'PRFD',
    lines: [['CW-BSL-0415-S', 'Merino thermal base layer, long sleeve, S', 2, 2200]],
    notes: 'One of two returned 2026-01-22; refunded 2200.',
    updated: '2026-01-30T10:00:00Z',
  },
  {
    id: '4105',
    who: DANA,
    placed: '2026-03-01T21:05:00Z',
    status: 'DLVD',
    lines: [
      ['CW-BTL-0750', 'Insulated water bottle, 750 ml', 1, 1800],
      ['CW-TRC-0400', 'Rechargeable headtorch, 400 lumen', 1, 3200],
    ],
  },
  { id: '4870', who: DANA, placed: '2026-05-15T17:30:00Z', status: 'DLVD', lines: [['CW-YGA-CORK', 'Cork yoga mat, 4 mm', 1, 3500]] },
  {
    id: '4996',
    who: DANA,
    placed: '2026-08-18T17:20:00Z',
    status: 'DLVD',
    lines: [
      ['CW-CAP-RUN', 'Lightweight running cap', 1, 1600],
      ['CW-REF-ARM', 'Reflective arm band', 1, 900],
    ],
  },
  {
    id: '5102',
    who: DANA,
    placed: '2026-10-05T18:05:00Z',
    status: 'DLVD',
    lines: [
      ['CW-SHO-TPG-6', 'Trailpeak GTX trail running shoes, UK 6', 1, 9499],
      ['CW-SCK-MER-3', 'Merino running socks, 3 pack', 1, 1800],
    ],
    instructions: 'If nobody answers, leave with the neighbour at number 16. Please do not leave on the doorstep.',
    updated: '2026-10-12T14:38:00Z',
  },
  // Priya: Block B, Kingsmead Court. 4471 was left at Block A and refunded; 4620 left at the main gate.
  { id: '4102', who: PRIYA, placed: '2026-03-02T17:30:00Z', status: 'DLVD', lines: [['CW-PLT-CER-3', 'Ceramic planter set of 3', 1, 2999]], instructions: 'Block B, buzzer 12.' },
  {
    id: '4315',
    who: PRIYA,
    placed: '2026-07-06T16:40:00Z',
    status: 'DLVD',
    lines: [['CW-BRD-BMB-L', 'Bamboo chopping board, large', 1, 1899]],
    instructions: 'Block B, buzzer 12.',
  },
  {
    id: '4471',
    who: PRIYA,
    placed: '2026-10-10T19:55:00Z',
    status: 'RFND',
    lines: [['CW-CST-IRN-24', 'Cast iron casserole dish, 24 cm', 1, 6499]],
    instructions: 'Block B, east entrance, buzzer 12.',
    notes: 'Left at Block A reception by NorthX; refunded 2026-10-16 (ticket T-21187); courier warned.',
    updated: '2026-10-16T10:12:00Z',
  },
  {
    id: '4620',
    who: PRIYA,
    placed: '2026-11-25T19:20:00Z',
    status: 'DLVD',
    lines: [['CW-GRN-BUR-01', 'Conical burr coffee grinder', 1, 12999]],
    instructions: 'Block B, east entrance, buzzer 12. Not the main gate or Block A.',
    updated: '2026-11-27T11:21:00Z',
  },
  // Marco: 5230 was charged twice, three and a half minutes apart.
  { id: '4412', who: MARCO, placed: '2026-06-01T18:10:00Z', status: 'DLVD', lines: [['CW-SCR-CRD-4V', 'Cordless screwdriver, 4 V', 1, 3999]] },
  { id: '4990', who: MARCO, placed: '2026-08-10T17:45:00Z', status: 'DLVD', lines: [['CW-GLV-WRK-L', 'Workshop gloves, large', 2, 1250]] },
  {
    id: '5230',
    who: MARCO,
    placed: '2026-10-20T19:01:00Z',
    status: 'DLVD',
    lines: [
      ['CW-DRL-18V-KIT', '18 V cordless drill kit', 1, 8999],
      ['CW-BIT-HSS-19', 'HSS drill bit set, 19 piece', 1, 1999],
    ],
    notes: 'Checkout page timed out once during payment (gateway 504).',
    updated: '2026-10-22T12:17:00Z',
  },
  // Leila: the courier says her address is wrong; it is the one she has always used.
  { id: '4188', who: LEILA, placed: '2026-04-14T18:00:00Z', status: 'DLVD', lines: [['CW-CND-TRIO', 'Scented candle trio', 1, 2400]] },
  { id: '4733', who: LEILA, placed: '2026-09-01T17:40:00Z', status: 'DLVD', lines: [['CW-CSH-LIN-2', 'Linen cushion covers, pair', 1, 2800]] },
  {
    id: '5317',
    who: LEILA,
    placed: '2026-10-22T16:45:00Z',
    status: 'EXCP',
    lines: [['CW-DUV-LIN-DBL', 'Linen duvet cover set, double', 1, 7999]],
    notes: 'NorthX exception ADX twice; parcel returning to sender.',
    updated: '2026-10-28T09:01:00Z',
  },
];

function orderRow(story: OrderStory): OrderRow {
  const items: OrderItem[] = story.lines.map(([sku, name, qty, unit], i) => ({
    sku,
    name,
    qty,
    unit_price_cents: unit,
    // UK prices include 20% VAT: the tax is a sixth of the line.
    tax_cents: Math.round((unit * qty) / 6),
    warehouse_bin: `DAV1-${String.fromCharCode(65 + (Number(digits(sku, 2)) % 12))}${digits(sku + 'bin', 2)}-${i + 1}`,
    supplier_ref: `SUP-${digits(sku + 'sup', 6)}`,
    hs_code: `6${digits(sku + 'hs', 7)}`,
    weight_g: 150 + (Number(digits(sku + 'w', 3)) % 900),
    discount_cents: 0,
    gift_wrap: false,
  }));
  return {
    order_id: story.id,
    customer_id: story.who.id,
    placed_at: story.placed,
    status_code: story.status,
    currency: 'GBP',
    total_cents: items.reduce((sum, item) => sum + item.qty * item.unit_price_cents, 0),
    items,
    delivery_address: story.who.address,
    address_lat: story.who.lat,
    address_lon: story.who.lon,
    delivery_instructions: story.instructions ?? null,
    channel: story.channel ?? (Number(digits(story.id, 1)) % 2 ? 'web' : 'ios'),
    warehouse_code: 'WH-DAV1',
    fraud_score: Number((Number(digits(story.id + 'fraud', 2)) / 1000).toFixed(3)),
    erp_ref: `ERP-CW-${digits(story.id + 'erp', 8)}`,
    internal_notes: story.notes ?? null,
    updated_at: story.updated ?? plusSeconds(story.placed, 3 * 86_400),
  };
}

/** Every demo order. */
export const ORDERS: OrderRow[] = ORDER_STORIES.map(orderRow);

// ---------------------------------------------------------------------------------------------
// Earlier support tickets

interface TicketStory {
  id: string;
  who: Person;
  order?: string;
  opened: string;
  /** Hours until it was closed; omitted for a ticket still open. */
  closedAfterHours?: number;
  subject: string;
  customer: string;
  reply: string;
  agent: string;
  tags: string[];
  channel?: string;
}

const TICKET_STORIES: TicketStory[] = [
  // Dana: thirteen earlier tickets, so the list pages and the bulk reader has work to do.
  {
    id: 'T-10482',
    who: DANA,
    order: '3388',
    opened: '2025-11-24T09:12:00Z',
    closedAfterHours: 30,
    subject: 'Rain jacket sizing',
    agent: 'sam.k',
    tags: ['exchange', 'sizing'],
    customer: 'The rain jacket from order 3388 is a bit tight across the shoulders. Could I swap it for a size L? I have kept the tags on and it has not been worn outside.',
    reply: 'No problem at all. I have emailed you a prepaid exchange label; once the courier scans the parcel we will send the size L straight away.',
  },
  {
    id: 'T-10617',
    who: DANA,
    opened: '2025-12-02T18:40:00Z',
    closedAfterHours: 4,
    subject: 'Email preferences',
    agent: 'ola.m',
    tags: ['account'],
    customer: 'I am getting three marketing emails a week. Can I keep the order updates but only get the newsletter once a month?',
    reply: 'Done: your account now receives order updates and the monthly newsletter only.',
  },
  {
    id: 'T-10955',
    who: DANA,
    order: '3741',
    opened: '2026-01-15T12:05:00Z',
    closedAfterHours: 26,
    subject: 'Returning one base layer',
    agent: 'sam.k',
    tags: ['return'],
    customer: 'I ordered two of the merino base layers in order 3741 but only need one. How do I send one back?',
    reply: 'You can return one item on its own. A return label is attached; the refund for that item goes back to your Visa card once the warehouse receives it.',
  },
  {
    id: 'T-11120',
    who: DANA,
    order: '3741',
    opened: '2026-01-29T08:30:00Z',
    closedAfterHours: 28,
    subject: 'Refund for returned base layer not showing',
    agent: 'priya.d',
    tags: ['refund', 'return'],
    customer: 'The warehouse got my return a week ago but I cannot see the £22.00 refund on my card yet.',
    reply: 'The refund of £22.00 settled on 30 January; banks can take up to five working days to show it. Sorry for the wait.',
  },
  {
    id: 'T-11408',
    who: DANA,
    order: '4105',
    opened: '2026-03-06T19:22:00Z',
    closedAfterHours: 14,
    subject: 'Headtorch missing from my parcel?',
    agent: 'ola.m',
    tags: ['missing-item', 'resolved-by-customer'],
    customer: 'Order 4105 arrived but I can only see the water bottle. Was the headtorch sent separately? Update: found it under the packing paper, sorry!',
    reply: 'Glad you found it. Nothing else needed; enjoy the evening runs.',
  },
  {
    id: 'T-11736',
    who: DANA,
    opened: '2026-04-11T10:00:00Z',
    closedAfterHours: 6,
    subject: 'Discount code not applied',
    agent: 'li.w',
    tags: ['promotion'],
    customer: 'The SPRING10 code from the newsletter said it was invalid at checkout. I did not place the order in the end.',
    reply: 'That code expired the day before; I have added a one-off 10% code to your account that works until the end of April.',
  },
  {
    id: 'T-12044',
    who: DANA,
    order: '4870',
    opened: '2026-05-18T16:45:00Z',
    closedAfterHours: 20,
    subject: 'Yoga mat colour',
    agent: 'li.w',
    tags: ['product-query'],
    customer: 'The yoga mat from order 4870 is lighter than the photo online. Is that normal for cork?',
    reply: 'Yes, natural cork varies from batch to batch and darkens a little with use. If you would prefer to return it, the label is on your account.',
  },
  {
    id: 'T-12310',
    who: DANA,
    opened: '2026-06-03T07:55:00Z',
    closedAfterHours: 9,
    subject: 'Delivery instructions for my address',
    agent: 'sam.k',
    tags: ['delivery-preference'],
    customer:
      'Two parcels have gone missing from doorsteps on my street this year. If I am out, please always leave parcels with my neighbour at number 16, never on the doorstep.',
    reply: 'I have added that to your account and to the delivery instructions that go to the courier with every order.',
  },
  {
    id: 'T-12577',
    who: DANA,
    opened: '2026-07-21T13:10:00Z',
    closedAfterHours: 3,
    subject: 'Unsubscribe from text messages',
    agent: 'ola.m',
    tags: ['account'],
    customer: 'Please stop the promotional text messages. Delivery texts from the courier are fine.',
    reply: 'Promotional texts are off. Courier delivery texts are sent by NorthX and are not affected.',
  },
  {
    id: 'T-12702',
    who: DANA,
    opened: '2026-08-01T11:35:00Z',
    closedAfterHours: 2,
    subject: 'Gift card balance',
    agent: 'li.w',
    tags: ['gift-card'],
    customer: 'How much is left on the gift card my sister gave me? The number is on the back of the card.',
    reply: 'There is £35.00 left on it, valid until March 2027. (For your security we never need the full card number by email.)',
  },
  {
    id: 'T-12839',
    who: DANA,
    order: '4996',
    opened: '2026-08-20T06:50:00Z',
    closedAfterHours: 7,
    subject: 'Delivery window',
    agent: 'sam.k',
    tags: ['delivery'],
    customer: 'Will order 4996 come before noon today? I am going out at twelve.',
    reply: 'NorthX shows a 10:00 to 13:00 window. If you are out it will go to your neighbour at number 16, as you asked.',
  },
  {
    id: 'T-13015',
    who: DANA,
    opened: '2026-09-14T21:05:00Z',
    closedAfterHours: 12,
    subject: 'Account sign-in email not arriving',
    agent: 'ola.m',
    tags: ['account'],
    customer: 'The sign-in link email never arrives. I have checked the spam folder.',
    reply: 'Your mail provider was rejecting our sign-in emails for a few hours yesterday; it is fixed now and a new link is on its way.',
  },
  {
    id: 'T-13390',
    who: DANA,
    order: '5102',
    opened: '2026-10-09T12:20:00Z',
    closedAfterHours: 22,
    subject: 'Parcel delayed? Tracking shows Glasgow',
    agent: 'li.w',
    tags: ['delivery', 'delay', 'mis-sort'],
    customer: 'Tracking for order 5102 says it was scanned in Glasgow this morning. I live in Leeds! Is it lost?',
    reply: "It was mis-sorted at the courier's Leeds hub and is on its way back; NorthX now expects to deliver on Monday 12 October. Sorry for the delay.",
  },

  // Priya: her earlier wrong-building case (order 4471) was refunded and closed.
  {
    id: 'T-20115',
    who: PRIYA,
    order: '4102',
    opened: '2026-03-05T10:30:00Z',
    closedAfterHours: 5,
    subject: 'Copy of invoice',
    agent: 'sam.k',
    tags: ['invoice'],
    customer: 'Could you send me a VAT invoice for order 4102? I need it for my records.',
    reply: 'The VAT invoice is attached and can also be downloaded from your order page.',
  },
  {
    id: 'T-20388',
    who: PRIYA,
    opened: '2026-04-20T09:15:00Z',
    closedAfterHours: 3,
    subject: 'Change of email address',
    agent: 'ola.m',
    tags: ['account'],
    customer: 'I have a new email address. Can I change it without losing my order history?',
    reply: 'Yes: change it under Account, Details. Your orders stay linked to your account, not to the email address.',
  },
  {
    id: 'T-20741',
    who: PRIYA,
    order: '4315',
    opened: '2026-07-09T18:05:00Z',
    closedAfterHours: 20,
    subject: 'Parcel left at Block A reception',
    agent: 'li.w',
    tags: ['delivery', 'wrong-building'],
    customer: 'Order 4315 was left at Block A reception. I live in Block B. I collected it myself this time, but please ask the courier to deliver to Block B.',
    reply: 'Thank you for letting us know, and sorry for the walk. I have passed this to NorthX and added "Block B, buzzer 12" to your delivery instructions.',
  },
  {
    id: 'T-20902',
    who: PRIYA,
    opened: '2026-08-30T14:40:00Z',
    closedAfterHours: 4,
    subject: 'Gift wrapping',
    agent: 'sam.k',
    tags: ['product-query'],
    customer: 'Can you gift wrap an order and leave the price off the delivery note?',
    reply: 'Yes: choose gift wrap at checkout and the delivery note is sent without prices.',
  },
  {
    id: 'T-21187',
    who: PRIYA,
    order: '4471',
    opened: '2026-10-14T15:20:00Z',
    closedAfterHours: 43,
    subject: 'Order 4471 left at the wrong building',
    agent: 'li.w',
    tags: ['delivery', 'wrong-building', 'refund'],
    customer:
      'Order 4471 was left at Block A reception instead of Block B, where I live. The concierge there says someone collected it and nobody knows who. Please remember: deliveries must go to Block B, not the main gate.',
    reply:
      'I am very sorry. NorthX confirmed the driver left it at Block A. We have refunded £64.99 to your Apple Pay card and warned the courier; the courier team will call you by 20 October.',
  },
  {
    id: 'T-21240',
    who: PRIYA,
    order: '4471',
    opened: '2026-10-19T11:00:00Z',
    closedAfterHours: 30,
    subject: 'Courier call back',
    agent: 'li.w',
    tags: ['delivery', 'follow-up'],
    customer: 'Just checking the courier team will still call me about the Block A delivery. Thanks for the quick refund.',
    reply: 'NorthX called you on 20 October and has added a note for Block B to their route planner for Kingsmead Court.',
  },

  // Marco: a duplicate confirmation email was waved through; the double charge was not spotted.
  {
    id: 'T-30210',
    who: MARCO,
    order: '4412',
    opened: '2026-06-05T17:20:00Z',
    closedAfterHours: 18,
    subject: 'Screwdriver battery',
    agent: 'ola.m',
    tags: ['product-query'],
    customer: 'How long should the battery of the cordless screwdriver from order 4412 take to charge the first time?',
    reply: 'About three hours for the first charge, then around ninety minutes.',
  },
  {
    id: 'T-30388',
    who: MARCO,
    order: '4990',
    opened: '2026-08-13T08:10:00Z',
    closedAfterHours: 10,
    subject: 'Gloves size',
    agent: 'sam.k',
    tags: ['exchange', 'sizing'],
    customer: 'The workshop gloves are too big. Can I swap both pairs for medium?',
    reply: 'An exchange label is on its way; the medium pairs ship as soon as the courier collects.',
  },
  {
    id: 'T-30512',
    who: MARCO,
    order: '5230',
    opened: '2026-10-21T07:45:00Z',
    closedAfterHours: 2,
    subject: 'Two order confirmation emails',
    agent: 'ola.m',
    tags: ['email'],
    customer: 'I got two confirmation emails for order 5230 last night, a few minutes apart. The checkout page froze while paying. Is that normal?',
    reply: 'There is only one order 5230 on your account, so you can ignore the second email.',
  },

  // Leila: earlier deliveries to the same address went fine.
  {
    id: 'T-40120',
    who: LEILA,
    order: '4188',
    opened: '2026-04-17T12:00:00Z',
    closedAfterHours: 24,
    subject: 'Candle arrived cracked',
    agent: 'li.w',
    tags: ['damaged', 'replacement'],
    customer: 'One of the three candles in order 4188 arrived with a cracked glass. The other two are fine.',
    reply: 'Sorry about that. A replacement candle is on its way to 22 Rosebank Terrace; no need to send the cracked one back.',
  },
  {
    id: 'T-40301',
    who: LEILA,
    order: '4733',
    opened: '2026-09-04T19:30:00Z',
    closedAfterHours: 12,
    subject: 'Cushion covers wash advice',
    agent: 'sam.k',
    tags: ['product-query'],
    customer: 'Can the linen cushion covers from order 4733 go in the tumble dryer?',
    reply: 'Best not: wash at 40 degrees and dry flat or on a line to avoid shrinking.',
  },
  {
    id: 'T-40377',
    who: LEILA,
    opened: '2026-09-20T10:10:00Z',
    closedAfterHours: 2,
    subject: 'Update phone number',
    agent: 'ola.m',
    tags: ['account'],
    customer: 'My mobile number has changed; the new one is on my account now. Will couriers get it?',
    reply: 'Yes, couriers receive the number on your account with each new order.',
  },
];

function emailDate(iso: string): string {
  return new Date(iso).toUTCString().replace('GMT', '+0000');
}

/** A ticket body as the ticketing system stores it: the customer's email, then the quoted reply thread. */
function ticketBody(story: TicketStory): string {
  const replyAt = plusSeconds(story.opened, Math.round((story.closedAfterHours ?? 2) * 0.6 * 3600));
  return [
    `Hi Cartwise team,`,
    ``,
    story.customer,
    ``,
    `Thanks,`,
    story.who.first,
    ``,
    `Sent from my phone`,
    ``,
    `---- Reply from Cartwise Customer Care (${story.agent}), ${emailDate(replyAt)} ----`,
    `Hi ${story.who.first},`,
    ``,
    story.reply,
    ``,
    `Kind regards,`,
    `Cartwise Customer Care`,
    `Ref ${story.id} | Order ${story.order ?? 'n/a'} | Please keep this reference in the subject line.`,
    `This email and any attachments are confidential and intended solely for the addressee. If you have received it in error, ` +
      `please tell the sender and delete it. Cartwise Ltd, registered in England and Wales, company number 09876543.`,
    ``,
    `> On ${emailDate(story.opened)}, ${story.who.name} <${story.who.email}> wrote:`,
    `> ${story.customer}`,
  ].join('\n');
}

/** Every earlier support ticket. */
export const TICKETS: TicketRow[] = TICKET_STORIES.map((story) => ({
  ticket_id: story.id,
  customer_id: story.who.id,
  order_id: story.order ?? null,
  opened_at: story.opened,
  closed_at: story.closedAfterHours === undefined ? null : plusSeconds(story.opened, story.closedAfterHours * 3600),
  subject: story.subject,
  body: ticketBody(story),
  status: story.closedAfterHours === undefined ? 'open' : 'closed',
  channel: story.channel ?? 'email',
  assigned_agent: story.agent,
  internal_tags: story.tags,
  sentiment_score: story.tags.includes('wrong-building') || story.tags.includes('mis-sort') ? -0.6 : 0.2,
  sla_breached: false,
}));

// ---------------------------------------------------------------------------------------------
// Payments

interface PaymentStory {
  order: string;
  kind: 'charge' | 'refund';
  at: string;
  code: string;
  amount?: number;
  seq: number;
  flags?: string[];
  note?: string;
}

const ORDER_BY_ID = new Map(ORDERS.map((o) => [o.order_id, o]));
const PERSON_BY_ID = new Map(Object.values(PEOPLE).map((p) => [p.id, p]));

// One captured charge per order, a minute after it was placed, unless the story says otherwise.
const PAYMENT_STORIES: PaymentStory[] = [
  ...ORDERS.filter((o) => o.order_id !== '5230').map((o): PaymentStory => ({ order: o.order_id, kind: 'charge', at: plusSeconds(o.placed_at, 52), code: 'CPT', seq: 1 })),
  // Marco's checkout timed out and retried: the same amount captured twice, 3 min 37 s apart.
  { order: '5230', kind: 'charge', at: '2026-10-20T19:02:11Z', code: 'CPT', seq: 1, note: 'gateway 504 returned to the storefront after capture' },
  { order: '5230', kind: 'charge', at: '2026-10-20T19:05:48Z', code: 'CPT', seq: 2, flags: ['velocity_same_amount'], note: 'storefront retry with a new idempotency key' },
  // Dana returned one of two base layers.
  { order: '3741', kind: 'refund', at: '2026-01-30T09:40:00Z', code: 'RFS', amount: 2200, seq: 1 },
  // Priya's 4471: refunded two days after it was left at Block A.
  { order: '4471', kind: 'refund', at: '2026-10-16T10:12:00Z', code: 'RFS', amount: 6499, seq: 1 },
];

function paymentRow(story: PaymentStory): PaymentRow {
  const order = ORDER_BY_ID.get(story.order);
  if (!order) throw new Error(`payment story for unknown order ${story.order}`);
  const who = PERSON_BY_ID.get(order.customer_id)!;
  const amount = story.amount ?? order.total_cents;
  const prefix = story.kind === 'charge' ? 'ch' : 're';
  const ref = `${prefix}_3Q${digits(`${story.order}${story.kind}${story.seq}`, 9)}X${digits(`${story.order}ref${story.seq}`, 6)}`;
  const card = who.card;
  return {
    payment_id: `pay_${story.order}_${story.kind}_${story.seq}`,
    customer_id: order.customer_id,
    order_id: story.order,
    kind: story.kind,
    amount_cents: amount,
    currency: order.currency,
    processor_code: story.code,
    processor_ref: ref,
    method_code: who.method,
    avs_result: card ? 'Y' : null,
    cvv_result: card ? 'M' : null,
    acquirer_response: story.kind === 'charge' ? '00 Approved or completed successfully' : '00 Refund accepted',
    risk_flags: story.flags ?? [],
    raw_response: {
      id: ref,
      object: story.kind === 'charge' ? 'charge' : 'refund',
      api_version: '2026-06-30.basil',
      amount,
      amount_captured: story.kind === 'charge' ? amount : 0,
      amount_refunded: 0,
      currency: order.currency.toLowerCase(),
      created: Math.floor(Date.parse(story.at) / 1000),
      livemode: true,
      status: 'succeeded',
      captured: story.kind === 'charge',
      description: `Cartwise order ${story.order}`,
      statement_descriptor: 'CARTWISE LTD',
      balance_transaction: `txn_${digits(ref + 'txn', 10)}`,
      billing_details: { name: who.name, email: who.email, phone: who.phone, address: { line1: who.address, country: 'GB' } },
      payment_method_details: card
        ? {
            type: who.method === 'applepay' ? 'card_wallet' : 'card',
            card: {
              brand: card.brand,
              last4: card.last4,
              exp_month: 8,
              exp_year: 2029,
              funding: 'credit',
              country: 'GB',
              fingerprint: `fp_${digits(who.id + 'fp', 10)}`,
              network: card.brand,
              wallet: who.method === 'applepay' ? { type: 'apple_pay', dynamic_last4: digits(who.id + 'dyn', 4) } : null,
              three_d_secure: { result: 'authenticated', version: '2.2.0', authentication_flow: 'frictionless' },
              checks: { address_line1_check: 'pass', address_postal_code_check: 'pass', cvc_check: 'pass' },
            },
          }
        : { type: 'paypal', paypal: { payer_id: `PP${digits(who.id + 'pp', 8)}`, payer_email: who.email, seller_protection: 'eligible' } },
      outcome: {
        network_status: 'approved_by_network',
        reason: null,
        risk_level: story.flags?.length ? 'elevated' : 'normal',
        risk_score: 10 + (Number(digits(ref + 'risk', 2)) % 40),
        seller_message: 'Payment complete.',
        type: 'authorized',
      },
      metadata: {
        order_id: story.order,
        cart_id: `cart_${digits(story.order + 'cart', 8)}`,
        storefront_session: `sess_${digits(story.order + 'sess' + story.seq, 10)}`,
        idempotency_key: `idem_${digits(story.order + 'idem' + story.seq, 12)}`,
        ...(story.note ? { processor_note: story.note } : {}),
      },
      receipt_url: `https://pay.example/receipts/${ref}`,
      fraud_details: {},
      refunds: { object: 'list', data: [], has_more: false },
    },
    created_at: story.at,
  };
}

/** Every payment record: a charge for every order, Marco's duplicate, and the settled refunds. */
export const PAYMENTS: PaymentRow[] = PAYMENT_STORIES.map(paymentRow);

// ---------------------------------------------------------------------------------------------
// Policies

const LEGAL = "Reviewed against the Consumer Rights Act 2015, s.29 (goods remain at the trader's risk until they come into the consumer's physical possession).";

/** The policies the investigator looks up; the first sentence of each is the rule itself. */
export const POLICIES: PolicyRow[] = [
  {
    topic: 'delivered_not_received',
    title: 'Parcel marked delivered but not received',
    body:
      'When the courier marks a parcel delivered but the customer did not receive it, and the proof of delivery is weak (no photo and no signature, or a delivery GPS scan more than 250 m from the delivery address), refund the order total or send a replacement, as the customer prefers. ' +
      'Check the tracking events and the payment records first. If a photo or signature shows the parcel at the address, ask the customer to check with neighbours and open a courier trace instead. ' +
      'A refund always needs a recorded human approval before it is issued; do not tell the customer one is coming until it is approved.',
    keywords: ['marked delivered', 'delivered but not received', 'not received', 'never arrived', 'did not arrive', 'missing parcel', 'lost parcel', 'stolen', 'not delivered'],
    owner_team: 'customer-care',
    revision: 4,
    legal_review_notes: LEGAL,
    updated_at: '2026-06-15T09:00:00Z',
  },
  {
    topic: 'duplicate_charge',
    title: 'Customer charged twice for one order',
    body:
      'If the payment records show two captured charges of the same amount for one order, refund the duplicate charge in full and keep the original. ' +
      'An authorisation that was voided or never captured is not a second charge: explain that it will drop off the statement within seven days. ' +
      'The refund needs a recorded human approval before it is issued.',
    keywords: ['charged twice', 'double charge', 'double charged', 'duplicate charge', 'two charges', 'two payments', 'overcharged', 'charged two times'],
    owner_team: 'payments-ops',
    revision: 2,
    legal_review_notes: null,
    updated_at: '2026-04-02T09:00:00Z',
  },
  {
    topic: 'wrong_building',
    title: 'Parcel delivered to the wrong building or address',
    body:
      'If tracking shows the parcel was left at a different building, block, reception or gate than the delivery address on the order, the delivery was not completed: refund the order total or send a replacement, and report the driver to the courier. ' +
      "For a repeat case at the same address, add a courier instruction and record the customer's delivery preference. " +
      'The refund needs a recorded human approval before it is issued.',
    keywords: ['wrong building', 'wrong block', 'wrong flat', 'left at reception', 'main gate', 'left at the gate', 'misdelivered', 'delivered elsewhere', 'another building'],
    owner_team: 'customer-care',
    revision: 3,
    legal_review_notes: LEGAL,
    updated_at: '2026-07-20T09:00:00Z',
  },
  {
    topic: 'courier_address_dispute',
    title: 'Courier says the address was wrong',
    body:
      "When the courier reports the address as incorrect, compare it with the delivery address on the order and with earlier successful deliveries there; if the address is complete and correct, the failure is the courier's and the customer pays nothing for it. " +
      'Ask the courier to redeliver, or, if the parcel is already returning to us, offer a replacement or a refund of the order total once it is back. ' +
      'If the customer gave an incomplete address, offer a redelivery at the standard delivery charge.',
    keywords: [
      'address incorrect',
      'address was wrong',
      'courier says the address',
      'address not found',
      'returned to sender',
      'return to sender',
      'undeliverable',
      'courier blames',
    ],
    owner_team: 'delivery-ops',
    revision: 2,
    legal_review_notes: null,
    updated_at: '2026-05-11T09:00:00Z',
  },
  {
    topic: 'refund_general',
    title: 'General refund policy',
    body:
      'A refund goes back to the original payment method and never exceeds what was charged for the order less what has already been refunded. ' +
      'Banks usually show it within 5 to 10 business days. Every refund needs a recorded human approval before it is issued, and nobody may promise one before that.',
    keywords: ['refund', 'refund policy', 'money back', 'reimburse', 'how long does a refund take'],
    owner_team: 'payments-ops',
    revision: 6,
    legal_review_notes: 'Approval limits per approver are configured in casework (CASEWORK_APPROVERS).',
    updated_at: '2026-03-01T09:00:00Z',
  },
  {
    topic: 'late_delivery',
    title: 'Late or delayed delivery',
    body: "A parcel is late when it has not been delivered two working days after the courier's promised date. Apologise, share the latest tracking event, and offer a refund of the delivery charge; the order itself is refunded only if the parcel is lost.",
    keywords: ['late', 'delayed', 'delay', 'not moving', 'stuck in transit', 'mis-sorted', 'slow delivery'],
    owner_team: 'delivery-ops',
    revision: 1,
    legal_review_notes: null,
    updated_at: '2026-02-10T09:00:00Z',
  },
  {
    topic: 'damaged_item',
    title: 'Item arrived damaged or faulty',
    body: 'Ask for a photo of the damage, then send a replacement or refund the item. The customer never pays to return a damaged item.',
    keywords: ['damaged', 'broken', 'cracked', 'faulty', 'defective', 'arrived damaged'],
    owner_team: 'customer-care',
    revision: 2,
    legal_review_notes: LEGAL,
    updated_at: '2026-02-10T09:00:00Z',
  },
];
