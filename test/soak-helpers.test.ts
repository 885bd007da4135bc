import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { demoRows } from '../src/dev/demo-data/seed';
import { cohortMessage, cohortOrderId, cohortRow } from '../src/dev/soak/cohorts';
import { findInfrastructureText } from '../src/dev/soak/infra-text';
import { parseFleetOptions } from '../src/dev/soak/fleet-options';
import { parseSoakOptions } from '../src/dev/soak/options';
import { seededRng } from '../src/dev/rng';

// The soak's pure parts: how it copies the demo data per investigation, what it counts as
// infrastructure text in a reply, and its options.

describe('soak cohorts', () => {
  it('gives each cohort its own customer, order and parcel ids, so two investigations never share an order', () => {
    const order = demoRows().orders.find((o) => (o as { order_id: string }).order_id === '5102')!;
    const a = cohortRow(0, order as Record<string, unknown>);
    const b = cohortRow(1, order as Record<string, unknown>);
    assert.notEqual(a.order_id, b.order_id);
    assert.notEqual(a.customer_id, b.customer_id);
    assert.equal(a.total_cents, (order as { total_cents: number }).total_cents);
  });

  it('rewrites the order number in an event message to the cohort’s, leaving other numbers alone', () => {
    assert.equal(
      cohortMessage(3, 'my order 5102 shows as delivered on 12 October, at number 16'),
      `my order ${cohortOrderId(3, '5102')} shows as delivered on 12 October, at number 16`,
    );
  });

  it('keeps cohort order numbers within the six digits the investigator reads', () => {
    assert.match(cohortOrderId(89, '5102'), /^\d{6}$/);
    assert.throws(() => cohortOrderId(90, '5102'), RangeError);
  });
});

describe('infrastructure text', () => {
  it('finds socket errors, hosts, connection strings and stack frames', () => {
    assert.equal(findInfrastructureText('I could not look up order 5102: connect ECONNREFUSED 127.0.0.1:17301')?.name, 'socket error code');
    assert.equal(findInfrastructureText('cannot reach postgres://db/casework')?.name, 'connection string');
    assert.equal(findInfrastructureText('Error: boom\n    at withCustomer (/app/src/db/pool.ts:80:5)')?.name, 'stack frame');
    assert.equal(findInfrastructureText('timeout exceeded when trying to connect')?.name, 'database error');
  });

  it('passes the demo’s ordinary replies', () => {
    assert.equal(findInfrastructureText('It was left at Block A reception at 14:05 on 14 October, not at Block B.'), undefined);
    assert.equal(findInfrastructureText('Your refund of £54.99 has been issued; banks usually show it within 5 to 10 business days.'), undefined);
  });
});

describe('soak options', () => {
  it('defaults to 30 investigations, 20 kills, outages of 20-60 s and a 20-minute bound', () => {
    const o = parseSoakOptions(['--seed', '7']);
    assert.deepEqual([o.investigations, o.kills, o.outageSeconds, o.timeoutMs, o.seed], [30, 20, [20, 60], 1_200_000, 7]);
  });

  it('reads a single outage length as a range of one', () => {
    assert.deepEqual(parseSoakOptions(['--outage-seconds', '20']).outageSeconds, [20, 20]);
  });

  it('refuses more investigations than it has cohorts for', () => {
    assert.throws(() => parseSoakOptions(['--investigations', '500']), /investigations/);
  });

  it('reads every flag it takes, and refuses one it does not (the fleet soak\u2019s --cases)', () => {
    const o = parseSoakOptions(
      '--investigations 4 --kills 3 --outages 1 --outage-seconds 5-9 --cut-mode close --server-restarts 0 --server-down-seconds 2-3 --seed 9 --timeout 2.5 --keep --temporal-port 7001 --ui-port 8001 --proxy-port 17001 --postgres postgres://x/y'.split(
        ' ',
      ),
    );
    assert.deepEqual(o, {
      investigations: 4,
      cutMode: 'close',
      kills: 3,
      outages: 1,
      outageSeconds: [5, 9],
      serverRestarts: 0,
      serverDownSeconds: [2, 3],
      seed: 9,
      timeoutMs: 150_000,
      keep: true,
      temporalPort: 7001,
      uiPort: 8001,
      proxyPort: 17001,
      postgresUrl: 'postgres://x/y',
    });
    assert.throws(() => parseSoakOptions(['--cases', '3']), /--cases/);
    assert.throws(() => parseSoakOptions(['--cut-mode', 'cut']), /--cut-mode must be reset, close or alternate/);
    assert.throws(() => parseSoakOptions(['--timeout', '0']), /--timeout must be a positive number/);
  });

  it('schedules the same faults for the same seed', () => {
    const a = seededRng(42);
    const b = seededRng(42);
    assert.deepEqual([a.next(), a.next(), a.next()], [b.next(), b.next(), b.next()]);
  });
});

describe('fleet soak options', () => {
  it('defaults to 15 cases over 90 s, 8 kills, outages of 10-20 s and a 15-minute bound, ignoring --fleet', () => {
    assert.deepEqual(parseFleetOptions(['--fleet', '--seed', '7']), {
      cases: 15,
      spreadSeconds: 90,
      kills: 8,
      outageSeconds: [10, 20],
      serverDownSeconds: [5, 10],
      seed: 7,
      timeoutMs: 900_000,
      keep: false,
      temporalPort: 7490,
      uiPort: 8490,
      postgresUrl: 'postgres://postgres@127.0.0.1:5432/postgres',
    });
  });

  it('reads every flag it takes, and refuses one it does not (the single soak\u2019s --investigations)', () => {
    const o = parseFleetOptions(
      '--fleet --cases 6 --spread 45 --kills 2 --outage-seconds 3 --server-down-seconds 1-4 --seed 11 --timeout 3 --keep --temporal-port 7002 --ui-port 8002 --postgres postgres://a/b'.split(
        ' ',
      ),
    );
    assert.deepEqual(o, {
      cases: 6,
      spreadSeconds: 45,
      kills: 2,
      outageSeconds: [3, 3],
      serverDownSeconds: [1, 4],
      seed: 11,
      timeoutMs: 180_000,
      keep: true,
      temporalPort: 7002,
      uiPort: 8002,
      postgresUrl: 'postgres://a/b',
    });
    assert.throws(() => parseFleetOptions(['--investigations', '3']), /--investigations/);
    assert.throws(() => parseFleetOptions(['--spread', '10']), /--spread must be at least 30 seconds/);
    assert.throws(() => parseFleetOptions(['--cases', '0']), /--cases must be at least 1/);
    assert.throws(() => parseFleetOptions(['--kills', 'many']), /--kills must be a whole number/);
  });
});
