import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decideRefund, DecisionRejectedError, readStatus } from '../src/client/investigations';
import { describeStatus } from '../src/client/format';
import { statusCommand } from '../src/main/commands/investigation';
import { ledgerCard } from '../src/server/console/ledger-card';
import { visibleText } from './support/console-agent';
import type { Database } from '../src/db/pool';
import { DEMO } from '../src/dev/demo-data/seed';
import { DECISION_PREFIX } from '../src/context/wire';
import { investigationId } from '../src/schemas/event';
import type { InvestigationStatus } from '../src/schemas/investigation';
import type { ModelRequest } from '../src/schemas/model';
import { settingsWith, ticket } from './support/investigate';
import { answer, calls, lastToolResults, scriptedModel, toolUse } from './support/scripted-model';
import { deliver } from './support/scripted-run';
import { openTestDatabase, unique } from './support/db';
import { startTestWorker, type TestWorker } from './support/temporal';

// Marco's double charge, opened as two tickets: each investigation asks for the duplicate back.
// The second request is flagged as overlapping the first on the request itself; approving
// both pays one charge, never the genuine one too. Run by a scripted model (the real model
// cannot run here) on the real dev server and real Postgres, with two workers, one per case.

const marco = DEMO.customers.marco;
const model = scriptedModel();
let db: Database;
let one: TestWorker;
let two: TestWorker;

before(async () => {
  db = await openTestDatabase({ seed: true });
  one = await startTestWorker({ pool: db.app, model });
  two = await startTestWorker({ pool: db.app, model });
});
after(async () => {
  await one?.stop();
  await two?.stop();
  await db?.close();
});

/** A new order of Marco's, captured twice for its total (a retried checkout), so each test has a double charge of its own. */
async function doubleCharged(total: number): Promise<{ orderId: string; charges: string[] }> {
  const orderId = unique('9')
    .replace(/[^0-9A-Za-z]/g, '')
    .slice(0, 30);
  await db.admin.query(
    `INSERT INTO orders (order_id, customer_id, placed_at, status_code, currency, total_cents, items, delivery_address, updated_at)
     VALUES ($1, $2, now(), 'DLVD', 'GBP', $3, '[]', '1 Test Street', now())`,
    [orderId, marco, total],
  );
  const charges = [`ch_${orderId}_a`, `ch_${orderId}_b`];
  for (const [i, ref] of charges.entries()) {
    await db.admin.query(
      `INSERT INTO payments (payment_id, customer_id, order_id, kind, amount_cents, currency, processor_code, processor_ref, method_code, raw_response, created_at)
       VALUES ($1, $2, $3, 'charge', $4, 'GBP', 'CPT', $5, 'visa', '{}', now() + make_interval(secs => $6))`,
      [`pay_${orderId}_${i}`, marco, orderId, total, ref, i * 200],
    );
  }
  return { orderId, charges };
}

/** Opens a ticket whose model asks for the duplicate charge back and then tells Marco it is being reviewed. */
async function openCase(tw: TestWorker, orderId: string, amount: number, afterDecision: string) {
  const event = ticket(marco, `I was charged twice for order ${orderId}.`);
  const id = investigationId(event.ticketId);
  const ask = toolUse('request_refund', { order_id: orderId, amount_cents: amount, reason: 'Charged twice; refunding the duplicate charge.', kind: 'duplicate_charge' });
  model.script(id, [calls(ask), answer('A colleague is reviewing the refund of the duplicate charge.'), answer(afterDecision)]);
  const status = await deliver(tw, model, event, settingsWith());
  assert.equal(status.status, 'awaiting_approval');
  const filed = JSON.parse(lastToolResults(model.requests(id, 'investigate')[1]!).find((r) => r.tool_use_id === ask.id)!.content);
  return { id, ticketId: event.ticketId, status, filed, requestId: status.pendingApproval!.request_id };
}

async function until(tw: TestWorker, id: string, what: string, ok: (s: InvestigationStatus) => boolean): Promise<InvestigationStatus> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const status = await readStatus(tw.client, id).catch(() => undefined);
    if (status && ok(status)) return status;
    if (model.failures(id).length) throw new Error(model.failures(id).at(-1));
    if (Date.now() > deadline) throw new Error(`${id}: ${what} did not happen; last status ${status?.status}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

function decisionNote(request: ModelRequest): { refund: unknown; refused?: string; next: string } {
  const last = request.messages[request.messages.length - 1]!;
  const blocks = typeof last.content === 'string' ? [] : last.content;
  const note = blocks.flatMap((b) => (b.type === 'text' && b.text.startsWith(DECISION_PREFIX) ? [b.text.slice(DECISION_PREFIX.length)] : []))[0];
  assert.ok(note, 'the request carries the decision note');
  return JSON.parse(note);
}

const refundRows = async (orderId: string) =>
  (await db.admin.query('SELECT request_id, amount_cents, currency, kind, charge_id FROM refunds WHERE order_id = $1 ORDER BY issued_at', [orderId])).rows;

describe('two tickets about one double charge', () => {
  test('the second request is flagged; approving the first pays the duplicate; approving the second is refused in the words of the ledger', async () => {
    const total = 10_998;
    const { orderId, charges } = await doubleCharged(total);
    const first = await openCase(one, orderId, total, 'Your duplicate charge has been refunded.');
    assert.deepEqual(first.filed.overlaps, undefined, 'the first request overlaps nothing');
    assert.equal(first.filed.charge_id, charges[1], 'a duplicate-charge refund reverses the later capture');

    const second = await openCase(two, orderId, total, 'unused');
    assert.deepEqual(second.filed.overlaps, [first.requestId], 'the model is told the request overlaps the other case');
    assert.match(second.filed.next, new RegExp(`overlaps ${first.requestId}`));
    assert.deepEqual(
      second.filed.ledger.pending_in_other_cases.map((p: { request_id: string; ticket_id: string }) => [p.request_id, p.ticket_id]),
      [[first.requestId, first.ticketId]],
      'the model sees the pending request and its ticket',
    );
    assert.deepEqual(second.status.pendingApproval!.overlaps, [first.requestId], 'the flag is on the request the approver decides');
    const { rows } = await db.admin.query('SELECT overlapping_requests FROM refund_requests WHERE request_id = $1', [second.requestId]);
    assert.deepEqual(rows[0].overlapping_requests, [first.requestId], 'and on its row in the refund trail');

    await decideRefund(one.client, first.id, { requestId: first.requestId, decision: 'approved', approver: 'support-lead' });
    await until(one, first.id, 'the first refund', (s) => s.refunds.length === 1 && s.status === 'waiting_for_customer');
    // The paying case tells the other one what the ledger now holds.
    const heard = await until(two, second.id, 'the second case hearing of the refund', (s) => s.pendingApproval?.ledger?.refunds.length === 1);

    // What the approver of the second case sees, before deciding: on the console card and in `casework status`.
    const pending = heard.pendingApproval!;
    const card = visibleText(ledgerCard(pending.ledger!, pending, false).toString());
    assert.match(
      card,
      new RegExp(`Approving this will be refused: order ${orderId} was captured £219\\.96 in two charges; £109\\.98 is already refunded for charge ${charges[1]}`),
    );
    assert.match(card, new RegExp(`overlaps ${first.requestId}`));
    assert.match(card, new RegExp(`Refund \\(duplicate charge\\) £109\\.98 ${charges[1]}`));
    const status = describeStatus(heard).join('\n');
    assert.match(status, new RegExp(`pending refund ${second.requestId}: £109\\.98 duplicate charge of charge ${charges[1]} on order ${orderId}`));
    assert.match(status, new RegExp(`overlaps ${first.requestId}, pending in another case`));
    assert.match(status, new RegExp(`charge ${charges[1]}: £109\\.98 at \\S+, refunded £109\\.98`));
    // `casework status` itself, reading the ledger from Postgres as it prints.
    const printed: string[] = [];
    assert.equal(await statusCommand([second.id], { ...two.config, DATABASE_URL: db.url }, (line) => printed.push(line)), 0);
    assert.match(printed.join('\n'), new RegExp(`order ${orderId} \\(GBP\\): total £109\\.98, captured £219\\.96, refunded £109\\.98, remaining £109\\.98`));

    await assert.rejects(decideRefund(two.client, second.id, { requestId: second.requestId, decision: 'approved', approver: 'support-lead' }), (error: Error) => {
      assert.ok(error instanceof DecisionRejectedError);
      assert.equal(
        error.message,
        `refund decision refused: order ${orderId} was captured £219.96 in two charges; £109.98 is already refunded for charge ${charges[1]}; this request would refund that charge again`,
      );
      return true;
    });
    assert.deepEqual(await refundRows(orderId), [{ request_id: first.requestId, amount_cents: total, currency: 'GBP', kind: 'duplicate_charge', charge_id: charges[1] }]);
    assert.equal((await readStatus(two.client, second.id)).status, 'awaiting_approval', 'the second case still waits for a person, who may deny it');
  });

  test('two approvals racing on two workers pay one charge; the other is refused at payment under the order lock, the case goes on, and a person is told', async () => {
    const total = 4_550;
    const { orderId, charges } = await doubleCharged(total);
    const first = await openCase(one, orderId, total, 'Your duplicate charge has been refunded.');
    const second = await openCase(two, orderId, total, 'I am sorry: that charge has already been refunded in your other ticket.');

    // Both validators pass: neither case has paid yet when the two approvals arrive.
    await Promise.all([
      decideRefund(one.client, first.id, { requestId: first.requestId, decision: 'approved', approver: 'support-lead' }),
      decideRefund(two.client, second.id, { requestId: second.requestId, decision: 'approved', approver: 'support-lead' }),
    ]);
    const [a, b] = await Promise.all([
      until(one, first.id, 'the first case settling', (s) => s.status === 'waiting_for_customer'),
      until(two, second.id, 'the second case settling', (s) => s.status === 'waiting_for_customer'),
    ]);

    const paid = await refundRows(orderId);
    assert.equal(paid.length, 1, 'one charge refunded, never both');
    assert.equal(paid[0].charge_id, charges[1]);
    const [winner, loser] = paid[0].request_id === first.requestId ? [a, b] : [b, a];
    assert.equal(winner.refunds.length, 1);
    assert.equal(loser.refunds.length, 0);
    assert.equal(loser.refusedRefunds?.length, 1, 'the refusal is on the case for the approver to see');
    assert.match(
      loser.refusedRefunds[0]!.reason,
      new RegExp(`already refunded for charge ${charges[1]}; this request would refund that charge again|charge ${charges[1]} .*already refunded`),
    );
    const loserId = loser.workflowId;
    const note = decisionNote(model.requests(loserId, 'investigate').at(-1)!);
    assert.equal(note.refund, null);
    assert.match(note.refused!, /already refunded/, 'the model is told why in plain words');
    const { rows } = await db.admin.query('SELECT status FROM refund_requests WHERE request_id = $1', [loser.decisions[0]!.requestId]);
    assert.equal(rows[0].status, 'refused', 'the refused request holds no money any more');
  });
});
