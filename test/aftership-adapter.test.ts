import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ConfigError } from '../src/config';
import { aftershipSettingsFromEnv, type AftershipSettings } from '../src/commerce/aftership/settings';
import { AftershipRefusedError, AftershipUnavailableError, createAftershipTrackingSource, rateLimitWaitMs } from '../src/commerce/aftership/tracking';
import { eventCodeOf, podTypeOfLocation, trackingEventOf } from '../src/commerce/aftership/translate';
import type { ShopOrder, TrackingSource } from '../src/commerce/shop';
import { createShopifyOrderSource } from '../src/commerce/shopify/orders';
import { shopifySettingsFromEnv } from '../src/commerce/shopify/settings';
import { COURIER_EVENT_CODES, DELIVERY_POD_TYPES } from '../src/activities/tools/codes';
import { startAftershipStandin, type AftershipStandin } from '../src/dev/aftership-standin';
import { startCommerceStandins } from '../src/dev/commerce-standins';
import { seedDemoTracking } from '../src/dev/aftership-standin-demo';
import { DEMO_PARCELS } from '../src/dev/demo-data/demo-parcels';
import { ORDERS } from '../src/dev/demo-data/demo-shop';
import { trackingRows } from '../src/dev/demo-data/demo-tracking';
import { DEMO } from '../src/dev/demo-data/seed';
import { startShopifyStandin, type ShopifyStandin } from '../src/dev/shopify-standin';
import { seedDemoShop } from '../src/dev/shopify-standin-demo';

// The AfterShip tracking adapter through the official @aftership/tracking-sdk against the
// AfterShip stand-in (a test double of the Tracking API as strict as its documentation), seeded
// with the demo's NorthX parcels: every scan reads in casework's neutral courier codes and
// proof-of-delivery types exactly as the demo's feed, trackings are found by the order's Shopify
// fulfillments, and AfterShip's 429s are waited out when short and handed on when long.

let standin: AftershipStandin;
let shopify: ShopifyStandin;
let settings: AftershipSettings;
let tracking: TrackingSource;

const orderOf = (orderId: string): ShopOrder => {
  const row = ORDERS.find((o) => o.order_id === orderId)!;
  return {
    orderId,
    placedAt: row.placed_at,
    status: row.status_code,
    currency: row.currency,
    totalCents: row.total_cents,
    lines: [],
    deliveryAddress: row.delivery_address,
    addressPosition: null,
    deliveryInstructions: null,
  };
};

before(async () => {
  standin = await startAftershipStandin();
  seedDemoTracking(standin);
  settings = { apiKey: standin.apiKey, apiBase: standin.url, maxRateLimitWaitMs: 3_000, timeoutMs: 2_000 };
  tracking = createAftershipTrackingSource(settings);
  shopify = await startShopifyStandin();
});
after(async () => {
  await standin?.close();
  await shopify?.close();
});

describe('AfterShip tracking through the commerce port', () => {
  it("reads every demo parcel's scans as the demo's courier feed: codes, proof of delivery, place, words, position, newest first", async () => {
    for (const parcel of DEMO_PARCELS) {
      const rows = trackingRows(parcel).sort((a, b) => b.occurred_at.localeCompare(a.occurred_at));
      const page = await tracking.events(parcel.customer_id, orderOf(parcel.order_id), { offset: 0, limit: 50 });
      assert.equal(page.total, rows.length, parcel.order_id);
      // The same instant, whichever way the feed wrote it.
      const instant = (iso: string) => new Date(iso).toISOString();
      assert.deepEqual(
        page.items.map((e) => ({ ...e, occurredAt: instant(e.occurredAt) })),
        rows.map((r) => ({
          occurredAt: instant(r.occurred_at),
          code: r.code,
          podType: r.pod_type,
          podPhotoUrl: r.pod_photo_url,
          podSignature: r.pod_signature,
          locationName: r.location_name,
          description: r.description,
          gps: r.gps_lat === null || r.gps_lon === null ? null : { lat: r.gps_lat, lon: r.gps_lon },
          // AfterShip carries no courier's own note on a scan.
          courierNote: null,
        })),
        parcel.order_id,
      );
    }
  });

  it("pages a long journey (Dana's 5102), newest first, with the total", async () => {
    const all = await tracking.events(DEMO.customers.dana, orderOf(DEMO.orders.notDelivered), { offset: 0, limit: 100 });
    const second = await tracking.events(DEMO.customers.dana, orderOf(DEMO.orders.notDelivered), { offset: 3, limit: 3 });
    assert.equal(second.total, all.total);
    assert.deepEqual(second.items, all.items.slice(3, 6));
    assert.equal(all.items[0]!.code, 'DLV');
  });

  it("finds an order's trackings by its Shopify fulfillments' tracking numbers, and none for another customer's order", async () => {
    const shopifySettings = {
      storeDomain: shopify.storeDomain,
      accessToken: shopify.accessToken,
      apiVersion: shopify.apiVersion,
      apiBase: shopify.url,
      customers: seedDemoShop(shopify),
      orderNamePrefix: '#',
      maxThrottleWaitMs: 3_000,
      timeoutMs: 2_000,
    };
    const orders = createShopifyOrderSource(shopifySettings);
    const byNumbers = createAftershipTrackingSource(settings, { trackingNumbers: (customer, order) => orders.trackingNumbers(customer, order) });
    const dana = await byNumbers.events(DEMO.customers.dana, orderOf(DEMO.orders.notDelivered), { offset: 0, limit: 1 });
    assert.deepEqual([dana.items[0]?.code, dana.items[0]?.podType], ['DLV', 'DS']);
    assert.equal(standin.requests().at(-1)?.query.tracking_numbers, 'NX4100510200');
    const before = standin.requests().length;
    assert.deepEqual(await byNumbers.events(DEMO.customers.marco, orderOf(DEMO.orders.notDelivered), { offset: 0, limit: 5 }), { total: 0, items: [] });
    assert.equal(standin.requests().length, before, "AfterShip is not asked about another customer's order");
  });
});

describe('the stand-in demo environment', () => {
  it("configures both adapters from the environment it gives, and they read Dana's order and its delivery scan", async () => {
    const standins = await startCommerceStandins();
    try {
      const shop = createShopifyOrderSource(shopifySettingsFromEnv(standins.env)!);
      const scans = createAftershipTrackingSource(aftershipSettingsFromEnv(standins.env)!, { trackingNumbers: (c, o) => shop.trackingNumbers(c, o) });
      const order = await shop.order(DEMO.customers.dana, DEMO.orders.notDelivered);
      assert.equal(order?.status, 'DLVD');
      const latest = await scans.events(DEMO.customers.dana, order, { offset: 0, limit: 1 });
      assert.deepEqual([latest.items[0]?.code, latest.items[0]?.podType, latest.items[0]?.podPhotoUrl], ['DLV', 'DS', null]);
    } finally {
      await standins.close();
    }
  });
});

describe("AfterShip's rate limits", () => {
  it('a 429 whose window reopens shortly is waited out inside the call (X-RateLimit-Reset)', async () => {
    const waits: number[] = [];
    const source = createAftershipTrackingSource(settings, { sleep: (ms) => (waits.push(ms), new Promise((r) => setTimeout(r, ms))) });
    standin.rateLimit(1);
    const page = await source.events(DEMO.customers.leila, orderOf(DEMO.orders.wrongAddress), { offset: 0, limit: 5 });
    assert.ok(page.total > 0);
    assert.deepEqual(
      standin
        .requests()
        .slice(-2)
        .map((r) => r.status),
      [429, 200],
    );
    assert.equal(waits.length, 1);
    assert.ok(waits[0]! <= 2_000, `waited ${waits[0]} ms`);
  });

  it('a long rate limit fails the call as unavailable with its retry-after, without waiting', async () => {
    const waits: number[] = [];
    const source = createAftershipTrackingSource(settings, { sleep: async (ms) => void waits.push(ms) });
    standin.rateLimit(120);
    await assert.rejects(
      source.events(DEMO.customers.leila, orderOf(DEMO.orders.wrongAddress), { offset: 0, limit: 5 }),
      (e: unknown) => e instanceof AftershipUnavailableError && e.kind === 'unavailable' && (e.retryAfterSeconds ?? 0) >= 100,
    );
    assert.deepEqual(waits, []);
  });

  it("a burst past the window's limit is answered in full, each 429 waited out", async () => {
    const burst = await Promise.all(DEMO_PARCELS.map((p) => tracking.events(p.customer_id, orderOf(p.order_id), { offset: 0, limit: 1 })));
    assert.equal(burst.length, DEMO_PARCELS.length);
    assert.ok(burst.every((page) => page.total > 0));
  });

  it('an outage is unavailable (retried later), a wrong key is refused in words a person reads', async () => {
    standin.serverError();
    await assert.rejects(tracking.events(DEMO.customers.dana, orderOf(DEMO.orders.notDelivered), { offset: 0, limit: 1 }), AftershipUnavailableError);
    const wrong = createAftershipTrackingSource({ ...settings, apiKey: 'asat_wrong' });
    await assert.rejects(
      wrong.events(DEMO.customers.dana, orderOf(DEMO.orders.notDelivered), { offset: 0, limit: 1 }),
      (e: unknown) => e instanceof AftershipRefusedError && /401/.test(e.message),
    );
  });

  it('reads the wait from Retry-After or X-RateLimit-Reset', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1_700_000_000, max: 1_900_000_000 }), fc.integer({ min: 0, max: 600 }), (nowSeconds, ahead) => {
        assert.equal(rateLimitWaitMs({ 'x-ratelimit-reset': String(nowSeconds + ahead) }, nowSeconds * 1000), ahead * 1000);
        assert.equal(rateLimitWaitMs({ 'retry-after': String(ahead), 'x-ratelimit-reset': String(nowSeconds + 999) }, nowSeconds * 1000), ahead * 1000);
      }),
    );
    assert.equal(rateLimitWaitMs({}, 0), undefined);
  });
});

describe('AfterShip settings and translations', () => {
  it('reads the environment, and names the variable missing when half configured', () => {
    assert.equal(aftershipSettingsFromEnv({}), undefined);
    assert.throws(
      () => aftershipSettingsFromEnv({ CASEWORK_AFTERSHIP_API_BASE: 'https://api.aftership.com' }),
      (e: unknown) => e instanceof ConfigError && /CASEWORK_AFTERSHIP_API_KEY is required/.test(e.message),
    );
    assert.throws(
      () => aftershipSettingsFromEnv({ CASEWORK_AFTERSHIP_API_KEY: 'k', CASEWORK_AFTERSHIP_API_BASE: 'https://api.aftership.com/' }),
      (e: unknown) => e instanceof ConfigError && /CASEWORK_AFTERSHIP_API_BASE/.test(e.message),
    );
    assert.deepEqual(aftershipSettingsFromEnv({ CASEWORK_AFTERSHIP_API_KEY: 'k' }), { apiKey: 'k', maxRateLimitWaitMs: 3_000, timeoutMs: 10_000 });
  });

  it("translates AfterShip's documented subtags into the neutral codes, and names one it has no word for", () => {
    const cases: [string, string][] = [
      ['InfoReceived_001', 'MAN'],
      ['InTransit_002', 'PUP'],
      ['InTransit_003', 'ARR'],
      ['InTransit_007', 'DEP'],
      ['OutForDelivery_001', 'OFD'],
      ['AttemptFail_001', 'ATT'],
      ['Delivered_001', 'DLV'],
      ['Exception_007', 'ADX'],
      ['Exception_010', 'RTS'],
    ];
    for (const [subtag, code] of cases) {
      assert.equal(eventCodeOf({ tag: subtag.split('_')[0], subtag }), code, subtag);
      assert.ok(COURIER_EVENT_CODES[code], code);
    }
    assert.equal(eventCodeOf({ tag: 'Exception', subtag: 'Exception_013' }), 'Exception_013', 'shipment lost: passed through, not guessed');
    assert.equal(eventCodeOf({ tag: 'InTransit' }), 'INT');
    const signed = trackingEventOf(
      { checkpoint_time: '2026-10-12T15:37:00+01:00', tag: 'Delivered', subtag: 'Delivered_003', message: 'Signed for' },
      { signed_by: 'D. WHITFIELD' },
    );
    assert.deepEqual([signed.occurredAt, signed.podType, signed.podSignature], ['2026-10-12T14:37:00.000Z', 'SG', 'D. WHITFIELD']);
    for (const [words, pod] of [
      ['Front Door', 'DS'],
      ['Neighbour', 'NB'],
      ['Reception', 'RC'],
      ['Safe place', 'SP'],
    ] as const) {
      assert.equal(podTypeOfLocation(words), pod);
      assert.ok(DELIVERY_POD_TYPES[pod]);
    }
    assert.equal(podTypeOfLocation('Locker 4'), null);
  });
});
