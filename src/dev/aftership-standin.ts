import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A test double of AfterShip's Tracking API (version 2026-07, the one @aftership/tracking-sdk 17
// speaks) for the call casework makes, as strict as AfterShip's documentation: GET
// /tracking/2026-07/trackings with the as-api-key header (401 without it), only the documented
// query parameters (anything else is a 400), every answer in the {meta, data} envelope, and a
// rate limit per one-second window with X-RateLimit-Limit / -Remaining / -Reset on every answer
// and a 429 TooManyRequests past it. Faults on demand: a 429 whose window reopens later, a 500.
// Nothing reaches AfterShip: it listens on loopback only.

/** A checkpoint as AfterShip returns it. */
export interface StandinCheckpoint {
  checkpoint_time: string;
  created_at: string;
  slug: string;
  location: string | null;
  city: string | null;
  state: string | null;
  country_region: string | null;
  country_region_name: string | null;
  coordinate: { latitude: number; longitude: number } | null;
  message: string;
  tag: string;
  subtag: string;
  subtag_message: string;
  raw_tag: string | null;
  source: 'carrier';
}

/** A tracking as AfterShip returns it (the fields casework reads, and their neighbours). */
export interface StandinTracking {
  id: string;
  tracking_number: string;
  slug: string;
  active: boolean;
  order_id: string | null;
  order_number: string | null;
  created_at: string;
  updated_at: string;
  tag: string;
  subtag: string;
  subtag_message: string;
  title: string;
  signed_by: string | null;
  delivery_location_type: string | null;
  proof_of_delivery: { type: string; url: string }[] | null;
  checkpoints: StandinCheckpoint[];
}

/** The running stand-in. */
export interface AftershipStandin {
  url: string;
  apiKey: string;
  addTracking(tracking: Omit<StandinTracking, 'id' | 'created_at' | 'updated_at' | 'active' | 'title' | 'tag' | 'subtag' | 'subtag_message'>): StandinTracking;
  /** The next request is answered 429, its window reopening `resetInSeconds` from now. */
  rateLimit(resetInSeconds: number): void;
  /** The next request is answered 500. */
  serverError(): void;
  requests(): { path: string; query: Record<string, string>; status: number }[];
  close(): Promise<void>;
}

const API_VERSION = '2026-07';
/** GetTrackingsQuery's parameters, as AfterShip documents them for GET /trackings. */
const TRACKINGS_QUERY = new Set([
  'cursor',
  'limit',
  'keyword',
  'tracking_numbers',
  'slug',
  'transit_time',
  'origin',
  'destination',
  'tag',
  'created_at_min',
  'created_at_max',
  'updated_at_min',
  'updated_at_max',
  'fields',
  'return_to_sender',
  'courier_destination_country_region',
  'shipment_tags',
  'order_id',
]);

/** Starts the stand-in on a free loopback port; `requestsPerSecond` is the window's limit (AfterShip's default is 10). */
export async function startAftershipStandin(options: { requestsPerSecond?: number } = {}): Promise<AftershipStandin> {
  const apiKey = `asat_${randomBytes(16).toString('hex')}`;
  const limit = options.requestsPerSecond ?? 10;
  const trackings: StandinTracking[] = [];
  const seen: { path: string; query: Record<string, string>; status: number }[] = [];
  let forced: { kind: '429'; reset: number } | { kind: '500' } | undefined;
  const window = { second: 0, used: 0 };

  function reply(
    res: ServerResponse,
    status: number,
    meta: Record<string, unknown>,
    data: unknown,
    headers: Record<string, string>,
    record: { path: string; query: Record<string, string> },
  ) {
    seen.push({ ...record, status });
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ meta: { code: status, ...meta }, data }));
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://standin');
    const record = { path: url.pathname, query: Object.fromEntries(url.searchParams) };
    const nowSecond = Math.floor(Date.now() / 1000);
    if (window.second !== nowSecond) Object.assign(window, { second: nowSecond, used: 0 });
    window.used++;
    const rate = { 'x-ratelimit-limit': String(limit), 'x-ratelimit-remaining': String(Math.max(0, limit - window.used)), 'x-ratelimit-reset': String(nowSecond + 1) };
    if (req.headers['as-api-key'] !== apiKey) return reply(res, 401, { type: 'Unauthorized', message: 'The API key is invalid.' }, {}, rate, record);
    const fault = forced;
    forced = undefined;
    if (fault?.kind === '429') {
      return reply(
        res,
        429,
        { type: 'TooManyRequests', message: 'You have exceeded the API call rate limit. The default limit is 10 requests per second.' },
        {},
        { ...rate, 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(fault.reset) },
        record,
      );
    }
    if (fault?.kind === '500') return reply(res, 500, { type: 'InternalError', message: "Something went wrong on AfterShip's end." }, {}, rate, record);
    if (window.used > limit)
      return reply(res, 429, { type: 'TooManyRequests', message: 'You have exceeded the API call rate limit. The default limit is 10 requests per second.' }, {}, rate, record);
    if (req.method !== 'GET' || url.pathname !== `/tracking/${API_VERSION}/trackings`) {
      return reply(res, 404, { type: 'NotFound', message: 'The URI requested is invalid or the resource requested does not exist.' }, {}, rate, record);
    }
    const unknown = [...url.searchParams.keys()].find((key) => !TRACKINGS_QUERY.has(key));
    if (unknown) return reply(res, 400, { type: 'BadRequest', message: `The value of ${unknown} is invalid.` }, {}, rate, record);
    const pageSize = Number(url.searchParams.get('limit') ?? 100);
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 200) return reply(res, 400, { type: 'BadRequest', message: 'The value of limit is invalid.' }, {}, rate, record);
    const numbers = url.searchParams.get('tracking_numbers')?.split(',');
    const orderId = url.searchParams.get('order_id');
    const matching = trackings.filter((t) => (!numbers || numbers.includes(t.tracking_number)) && (!orderId || t.order_id === orderId));
    const start = url.searchParams.has('cursor') ? Number(Buffer.from(url.searchParams.get('cursor')!, 'base64').toString('utf8')) : 0;
    const page = matching.slice(start, start + pageSize);
    const more = start + page.length < matching.length;
    const pagination = { total: matching.length, has_next_page: more, ...(more ? { next_cursor: Buffer.from(String(start + page.length)).toString('base64') } : {}) };
    return reply(res, 200, {}, { pagination, trackings: page }, rate, record);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    apiKey,
    addTracking(input) {
      const latest = [...input.checkpoints].sort((a, b) => Date.parse(b.checkpoint_time) - Date.parse(a.checkpoint_time))[0];
      const tracking: StandinTracking = {
        ...input,
        id: randomBytes(12).toString('hex'),
        active: latest?.tag !== 'Delivered',
        title: input.tracking_number,
        created_at: input.checkpoints[0]?.created_at ?? new Date().toISOString(),
        updated_at: latest?.created_at ?? new Date().toISOString(),
        tag: latest?.tag ?? 'Pending',
        subtag: latest?.subtag ?? 'Pending_001',
        subtag_message: latest?.subtag_message ?? 'Pending',
      };
      trackings.push(tracking);
      return tracking;
    },
    rateLimit(resetInSeconds) {
      forced = { kind: '429', reset: Math.floor(Date.now() / 1000) + resetInSeconds };
    },
    serverError() {
      forced = { kind: '500' };
    },
    requests: () => [...seen],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
