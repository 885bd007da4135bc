import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { evidenceLine, toolEvidence } from '../src/context/tool-evidence';
import { formatMoney } from '../src/context/money';
import { refundAwaitingNote, refundIssuedNote, refundRefusedNote } from '../src/workflows/desk-notes';
import { describeLedger } from '../src/context/ledger';

// The internal notes a support team reads on the desk ticket: money in the order's own
// currency, and evidence as sentences, not the JSON the model was given.

const awaiting = (currency: string | undefined, evidence: string[] = []) =>
  refundAwaitingNote({
    workflowId: 'investigation-zendesk-5158',
    requestId: 'req_1',
    orderId: '4471',
    amountCents: 4599,
    ...(currency ? { currency } : {}),
    reason: 'Left at the wrong building.',
    evidence,
    approvers: ['sam (up to 100.00)'],
  }).body;

describe('refund notes on the desk ticket', () => {
  it('show a pound order in pounds, a euro order in euros, and never default to euros', () => {
    assert.match(awaiting('GBP'), /^casework: refund of £45\.99 for order 4471 awaits approval\.$/m);
    assert.match(awaiting('EUR'), /refund of €45\.99 for order 4471/);
    assert.match(awaiting('SEK'), /refund of 45\.99 SEK for order 4471/);
    // A run from before the currency was recorded: the amount alone, not a guessed currency.
    assert.match(awaiting(undefined), /refund of 45\.99 for order 4471/);
    assert.doesNotMatch(awaiting('GBP') + awaiting(undefined), /EUR|€/);
    assert.match(
      refundIssuedNote({ requestId: 'req_1', orderId: '4471', amountCents: 4599, currency: 'GBP', approver: 'sam' }).body,
      /refund req_1 of £45\.99 for order 4471 was issued, approved by sam/,
    );
  });

  it('formats amounts in the currency\u2019s own minor unit, with thousands separated', () => {
    assert.equal(formatMoney(123456, 'gbp'), '£1,234.56');
    assert.equal(formatMoney(1200, 'JPY'), '1,200 JPY');
    assert.equal(formatMoney(5, 'USD'), '$0.05');
  });
});

describe('evidence lines', () => {
  const order = {
    order_id: '4471',
    status: 'delivered',
    placed_at: '2026-02-20T10:00:00Z',
    total_cents: 4599,
    currency: 'GBP',
    items: [{ name: 'Stoneware mug', qty: 2, price_cents: 1800 }],
    delivery_address: '12 High St',
    delivery_instructions: null,
    shipment: { courier: 'DPD', tracking_number: 'DPD123', status: 'delivered' },
  };
  const transcript: MessageParam[] = [
    { role: 'user', content: 'Order 4471 never came.' },
    {
      role: 'assistant',
      content: [
        { type: 'tool_use', id: 't1', name: 'get_order', input: { order_id: '4471' } },
        { type: 'tool_use', id: 't2', name: 'get_payments', input: { order_id: '4471' } },
        { type: 'tool_use', id: 't3', name: 'get_tracking_events', input: { order_id: '4471' } },
        { type: 'tool_use', id: 't4', name: 'lookup_policy', input: { situation: 'not received' } },
        { type: 'tool_use', id: 't5', name: 'write_notes', input: {} },
        { type: 'tool_use', id: 't6', name: 'get_earlier_tickets', input: {} },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't1', content: JSON.stringify(order) },
        {
          type: 'tool_result',
          tool_use_id: 't2',
          content: JSON.stringify({ order_id: '4471', charges: [], refunds: [], charged_cents: 4599, refunded_cents: 0, refundable_cents: 4599, possible_duplicate_charge: false }),
        },
        {
          type: 'tool_result',
          tool_use_id: 't3',
          content: [
            {
              type: 'text',
              text: JSON.stringify({
                order_id: '4471',
                events: [{ at: '2026-02-22T14:03:00Z', status: 'delivered', location: 'Leeds', detail: 'GPS scan 2.4 km from the delivery address' }],
                showing: 'events 1-1 of 1',
                next_page: null,
              }),
            },
          ],
        },
        {
          type: 'tool_result',
          tool_use_id: 't4',
          content: JSON.stringify({ topic: 'not_received', title: 'Parcel not received', text: 'Refund in full when the scan is over 250 m away.' }),
        },
        { type: 'tool_result', tool_use_id: 't5', content: 'notes' },
        { type: 'tool_result', tool_use_id: 't6', content: 'No earlier tickets.', is_error: true },
      ],
    },
  ];

  it('say what each tool found in words, in the order\u2019s currency, with no JSON left in them', () => {
    assert.deepEqual(toolEvidence(transcript, { currency: 'GBP' }), [
      'Order 4471: delivered, placed 2026-02-20, total £45.99, items: Stoneware mug x2, shipment: DPD DPD123 delivered',
      'Payments for order 4471: charged £45.99, refunded £0.00, refundable £45.99',
      'Tracking for order 4471: 2026-02-22 delivered at Leeds GPS scan 2.4 km from the delivery address',
      'Policy, Parcel not received: Refund in full when the scan is over 250 m away.',
    ]);
  });

  it('lands in the refund note as bullet lines a person can read', () => {
    const body = awaiting('GBP', toolEvidence(transcript, { currency: 'GBP' }));
    const lines = body.split('\n');
    const from = lines.indexOf('Evidence:');
    assert.ok(from > 0, body);
    const evidence = lines.slice(from + 1).filter((l) => l.startsWith('- '));
    assert.equal(evidence.length, 4);
    for (const line of evidence) assert.doesNotMatch(line, /[{}[\]"]|_cents|\\n/, line);
  });

  it('fall back to the plain fields of a result they have no sentence for, and clip long text', () => {
    assert.equal(evidenceLine('get_widget', JSON.stringify({ widget_id: 'w1', colour: 'red', nested: { a: 1 }, count: 3 })), 'get_widget: widget id w1, colour red, count 3');
    assert.equal(evidenceLine('get_widget', 'Plain   text\nresult'), 'get_widget: Plain text result');
    const long = evidenceLine('lookup_policy', JSON.stringify({ title: 'Long', text: 'word '.repeat(200) }));
    assert.ok(long.length <= 240 && long.endsWith('…'), long);
  });
});

describe('the order ledger on the desk ticket', () => {
  const ledger = {
    order_id: '5230',
    currency: 'GBP',
    total_cents: 10998,
    charges: [
      { charge_id: 'ch_A', amount_cents: 10998, at: '2026-10-20T19:02:11.000Z' },
      { charge_id: 'ch_B', amount_cents: 10998, at: '2026-10-20T19:05:48.000Z' },
    ],
    refunds: [],
    pending: [
      { request_id: 'req_1', ticket_id: 'T-1', amount_cents: 10998, kind: 'duplicate_charge' as const, charge_id: 'ch_B', status: 'awaiting_approval' as const },
      { request_id: 'req_2', ticket_id: 'T-2', amount_cents: 10998, kind: 'duplicate_charge' as const, charge_id: 'ch_B', status: 'awaiting_approval' as const },
    ],
  };

  it("shows the approver the order's charges, the other case's pending request with its ticket, and the overlap", () => {
    const body = refundAwaitingNote({
      workflowId: 'investigation-T-2',
      requestId: 'req_2',
      orderId: '5230',
      amountCents: 10998,
      currency: 'GBP',
      reason: 'Charged twice.',
      evidence: [],
      approvers: ['sam (up to 500.00)'],
      ledger: describeLedger(ledger, { except: 'req_2' }),
      overlaps: ['req_1'],
    }).body;
    assert.match(body, /^Warning: this request overlaps req_1, pending in another case for the same money; at most one can be paid\.$/m);
    assert.match(body, /^order 5230 \(GBP\): total £109\.98, captured £219\.96, refunded £0\.00, remaining £219\.96$/m);
    assert.match(body, /^ {2}charge ch_B: £109\.98 at 2026-10-20T19:05:48\.000Z$/m);
    assert.match(body, /^ {2}pending in ticket T-1: request req_1, £109\.98 duplicate charge of charge ch_B \(awaiting approval\)$/m);
    assert.doesNotMatch(body, /ticket T-2:/, 'the request itself is not listed as another case');
  });

  it('says an approved refund the ledger refused was not paid, and why', () => {
    const note = refundRefusedNote({
      requestId: 'req_2',
      orderId: '5230',
      amountCents: 10998,
      currency: 'GBP',
      approver: 'sam',
      reason: 'order 5230 was captured £219.96 in two charges; £109.98 is already refunded for charge ch_B; this request would refund that charge again; nothing was paid.',
    });
    assert.match(note.body, /refund req_2 of £109\.98 for order 5230, approved by sam, was not paid\. order 5230 was captured £219\.96/);
    assert.deepEqual([note.tags, note.status], [['casework_refund_refused'], 'open']);
  });
});
