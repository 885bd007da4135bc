import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { listMigrations, migrate } from '../src/db/migrate';
import type { Database } from '../src/db/pool';
import { DEMO, seedDemoData } from '../src/dev/demo-data/seed';
import { openTestDatabase } from './support/db';

// migrations/024_order_ledger.sql over a refund trail written before it: the trail stays valid
// (every row kept), gains its currency, and its kind and charge where the trail shows them. A
// trail holding the very bug the ledger closes (Marco's duplicate refunded twice) keeps both
// refunds: the first reverses the later capture, the second is recorded against the order.

const { marco, dana } = DEMO.customers;

describe('the order ledger migration over an older refund trail', () => {
  let db: Database;
  let duplicateRef: string;
  let danaCharge: string;

  before(async () => {
    const older = mkdtempSync(join(tmpdir(), 'casework-before-ledger-'));
    for (const m of listMigrations().filter((m) => m.id < '024')) copyFileSync(m.file, join(older, basename(m.file)));
    db = await openTestDatabase({ migrationsDir: older });
    await seedDemoData(db.admin);
    const refs = async (orderId: string) =>
      (await db.admin.query("SELECT processor_ref FROM payments WHERE order_id = $1 AND kind = 'charge' ORDER BY created_at", [orderId])).rows.map(
        (r) => r.processor_ref as string,
      );
    duplicateRef = (await refs('5230'))[1]!;
    danaCharge = (await refs('5102'))[0]!;
    const trail: [string, string, string, number, string][] = [
      ['req_old_1', marco, '5230', 10998, 'Charged twice for order 5230; refunding the duplicate charge.'],
      ['req_old_2', marco, '5230', 10998, 'Customer says they were charged twice; refund the duplicate.'],
      ['req_old_3', dana, '5102', 5000, 'Marked delivered but not received.'],
      ['req_old_4', dana, '5102', 300, 'Goodwill for the wait.'],
    ];
    for (const [id, customer, order, cents, reason] of trail) {
      await db.admin.query(
        `INSERT INTO refund_requests (request_id, customer_id, order_id, amount_cents, reason, workflow_id, tool_use_id, status) VALUES ($1, $2, $3, $4, $5, $6, 'toolu_old', 'refunded')`,
        [id, customer, order, cents, reason, `investigation-T-${id}`],
      );
      await db.admin.query(
        `INSERT INTO refund_decisions (request_id, customer_id, decision, approver, decided_at, approval_id) VALUES ($1, $2, 'approved', 'support-lead', now(), $3)`,
        [id, customer, `apr_${id}`],
      );
      await db.admin.query(
        `INSERT INTO refunds (refund_id, customer_id, approval_id, request_id, order_id, amount_cents, issued_at) VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))`,
        [`rfd_${id}`, customer, `apr_${id}`, id, order, cents, Number(id.slice(-1))],
      );
    }
    assert.ok((await migrate(db.admin)).includes('024_order_ledger'), 'the ledger migration applies over the older trail');
  });
  after(async () => {
    await db?.close();
  });

  test('keeps every row, back-fills the currency, and the kind and charge where the trail shows them', async () => {
    const { rows: requests } = await db.admin.query('SELECT request_id, currency, kind, charge_id FROM refund_requests ORDER BY request_id');
    assert.deepEqual(requests, [
      { request_id: 'req_old_1', currency: 'GBP', kind: 'duplicate_charge', charge_id: duplicateRef },
      { request_id: 'req_old_2', currency: 'GBP', kind: 'duplicate_charge', charge_id: duplicateRef },
      { request_id: 'req_old_3', currency: 'GBP', kind: 'not_received', charge_id: danaCharge },
      { request_id: 'req_old_4', currency: 'GBP', kind: 'partial', charge_id: null },
    ]);
    const { rows: refunds } = await db.admin.query('SELECT refund_id, currency, kind, charge_id FROM refunds ORDER BY refund_id');
    assert.deepEqual(refunds, [
      { refund_id: 'rfd_req_old_1', currency: 'GBP', kind: 'duplicate_charge', charge_id: duplicateRef },
      { refund_id: 'rfd_req_old_2', currency: 'GBP', kind: 'partial', charge_id: null },
      { refund_id: 'rfd_req_old_3', currency: 'GBP', kind: 'not_received', charge_id: danaCharge },
      { refund_id: 'rfd_req_old_4', currency: 'GBP', kind: 'partial', charge_id: null },
    ]);
  });

  test('from then on the database holds the order to what was captured', async () => {
    await db.admin.query(
      `INSERT INTO refund_requests (request_id, customer_id, order_id, amount_cents, reason, workflow_id, tool_use_id) VALUES ('req_new', $1, '5230', 1, 'One more penny.', 'investigation-T-new', 'toolu_new')`,
      [marco],
    );
    await db.admin.query(
      `INSERT INTO refund_decisions (request_id, customer_id, decision, approver, decided_at, approval_id) VALUES ('req_new', $1, 'approved', 'x', now(), 'apr_new')`,
      [marco],
    );
    await assert.rejects(
      db.admin.query(`INSERT INTO refunds (refund_id, customer_id, approval_id, request_id, order_id, amount_cents) VALUES ('rfd_new', $1, 'apr_new', 'req_new', '5230', 1)`, [
        marco,
      ]),
      /order 5230 was captured 21996 GBP, 21996 is already refunded; a refund of 1 would exceed what was captured/,
    );
  });
});
