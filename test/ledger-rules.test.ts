import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ledgerProblem, ledgerSummary, overlappingRequests, type LedgerPending, type OrderLedger } from '../src/context/ledger';

// The ledger's rules as the validator, the tools and the console apply them: pure, on Marco's
// order 5230 (£109.98, captured twice), in the words an approver reads.

const pending = (request_id: string, kind: LedgerPending['kind'], charge_id: string | null, amount_cents = 10998): LedgerPending => ({
  request_id,
  ticket_id: `T-${request_id}`,
  amount_cents,
  kind,
  charge_id,
  status: 'awaiting_approval',
});

const marco = (over: Partial<OrderLedger> = {}): OrderLedger => ({
  order_id: '5230',
  currency: 'GBP',
  total_cents: 10998,
  charges: [
    { charge_id: 'ch_A', amount_cents: 10998, at: '2026-10-20T19:02:11.000Z' },
    { charge_id: 'ch_B', amount_cents: 10998, at: '2026-10-20T19:05:48.000Z' },
  ],
  refunds: [],
  pending: [],
  ...over,
});

const refundedB = { refund_id: 'rfd_1', amount_cents: 10998, kind: 'duplicate_charge' as const, charge_id: 'ch_B', at: '2026-11-01T10:00:00.000Z', request_id: 'req_1' };

describe('the order ledger rules', () => {
  it('honours the first refund of the duplicate, and refuses a second reversal of that charge in words', () => {
    assert.equal(ledgerProblem(marco(), { amount_cents: 10998, kind: 'duplicate_charge', charge_id: 'ch_B' }), null);
    assert.equal(
      ledgerProblem(marco({ refunds: [refundedB] }), { request_id: 'req_2', amount_cents: 10998, kind: 'duplicate_charge', charge_id: 'ch_B' }),
      'order 5230 was captured £219.96 in two charges; £109.98 is already refunded for charge ch_B; this request would refund that charge again',
    );
  });

  it('refuses a duplicate-charge refund of the other charge once the duplicate is refunded: the genuine charge stays', () => {
    assert.match(
      ledgerProblem(marco({ refunds: [refundedB] }), { amount_cents: 10998, kind: 'duplicate_charge', charge_id: 'ch_A' }) ?? '',
      /so £109\.98 was charged twice; £109\.98 of it is already refunded as a duplicate charge/,
    );
  });

  it('bounds the order by what was captured and goods not received by what they cost', () => {
    assert.match(ledgerProblem(marco({ refunds: [refundedB] }), { amount_cents: 11000, kind: 'goodwill', charge_id: null }) ?? '', /at most £109\.98 can still be refunded/);
    const once = marco({ charges: [{ charge_id: 'ch_A', amount_cents: 10998, at: '2026-10-20T19:02:11.000Z' }] });
    assert.match(ledgerProblem(once, { amount_cents: 10999, kind: 'not_received', charge_id: null }) ?? '', /at most £109\.98 can still be refunded/);
    assert.equal(ledgerProblem(once, { amount_cents: 10998, kind: 'not_received', charge_id: 'ch_A' }), null);
  });

  it('flags requests for the same charge, and on an over-captured order a request naming only the order', () => {
    const ledger = marco({ pending: [pending('req_1', 'duplicate_charge', 'ch_B'), pending('req_x', 'partial', null, 500)] });
    assert.deepEqual(
      overlappingRequests(ledger, { amount_cents: 10998, kind: 'duplicate_charge', charge_id: 'ch_B' }).map((p) => p.request_id),
      ['req_1', 'req_x'],
    );
    assert.deepEqual(
      overlappingRequests(ledger, { amount_cents: 10998, kind: 'partial', charge_id: null }).map((p) => p.request_id),
      ['req_1', 'req_x'],
      'a model that did not say "duplicate" is flagged all the same',
    );
    const single = marco({ charges: [{ charge_id: 'ch_A', amount_cents: 10998, at: '2026-10-20T19:02:11.000Z' }], pending: [pending('req_1', 'partial', null, 500)] });
    assert.deepEqual(overlappingRequests(single, { amount_cents: 500, kind: 'goodwill', charge_id: null }), [], 'two small refunds on an order charged once do not overlap');
  });

  it('shows the model what was refunded, what other cases have pending with their tickets, and what remains, and not its own request', () => {
    const summary = ledgerSummary(marco({ refunds: [refundedB], pending: [pending('req_2', 'duplicate_charge', 'ch_B'), pending('req_3', 'partial', null, 100)] }), 'req_3');
    assert.deepEqual(summary, {
      currency: 'GBP',
      captured_cents: 21996,
      refunded_cents: 10998,
      remaining_cents: 10998,
      refunds: [{ amount_cents: 10998, kind: 'duplicate_charge', charge_id: 'ch_B' }],
      pending_in_other_cases: [{ request_id: 'req_2', ticket_id: 'T-req_2', amount_cents: 10998, kind: 'duplicate_charge', charge_id: 'ch_B' }],
    });
  });
});
