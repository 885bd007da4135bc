import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { demoRows } from '../src/dev/demo-data/seed';
import { cohortMessage, cohortOrderId, cohortRow } from '../src/dev/soak/cohorts';
import { findInfrastructureText } from '../src/dev/soak/infra-text';
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

  it('schedules the same faults for the same seed', () => {
    const a = seededRng(42);
    const b = seededRng(42);
    assert.deepEqual([a.next(), a.next(), a.next()], [b.next(), b.next(), b.next()]);
  });
});
