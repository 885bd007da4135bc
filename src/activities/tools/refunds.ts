import { createHash } from 'node:crypto';
import { BadInputError, NotFoundError } from '../../errors';
import type { Pool, PoolClient } from 'pg';
import { z } from 'zod';
import { formatMoney } from '../../context/money';
import { ToolError, type ToolContext } from '../../schemas/tool-call';
import { defineTool, defineTypedTool } from './define';
import { readPayments, readProviderView } from './payments';
import { payoutCharge, payoutKey, payoutReason, providerRefusal, sendPayout } from './payout';
import { withCustomer } from '../../db/pool';
import { isLedgerRefusal, lockOrderLedger, readOrderLedger } from '../../db/ledger';
import { payoutOf, startPayout, type PayoutRow } from '../../db/payouts';
import { recordProviderReport } from '../../db/provider-report';
import { recordShopOrder } from '../../db/shop-orders';
import type { ProviderPayments } from '../../commerce/payment-provider';
import type { Commerce, ShopOrder } from '../../commerce/shop';
import { CHARGE_KINDS, LEDGER_REFUSAL, ledgerProblem, overlappingRequests, type LedgerCharge, type OrderLedger, type RefundKind } from '../../context/ledger';
import { isoTimestamp } from '../../db/rows';
import { describeIssues } from '../../schemas/issues';

// The refund trail: request_refund asks, a human decides (recordRefundDecision, called by the
// workflow), issue_refund reserves the refund in the ledger and pays it through the payment
// provider (payout.ts). Each step is idempotent on a natural key, and the database
// refuses a refund without an approval (refunds.approval_id must name one; a denial has none)
// and any refund past the order's money ledger (migrations/024_order_ledger.sql). Orders are named
// as the commerce port gives them, whichever shop holds them: each step records the order as the
// shop just reported it (shop_orders, migrations/033_shop_orders.sql), and the ledger reads it.

/** A stable id from parts: a retry computes the same id, so it finds the same row. */
export function stableId(prefix: string, ...parts: string[]): string {
  return `${prefix}_${createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 16)}`;
}

// Serialises refund writes per order, so two requests cannot both pass the refundable check:
// the order's ledger row lock, the one the refunds trigger takes (migrations/024_order_ledger.sql).
async function lockOrderRefunds(client: PoolClient, customerId: string, orderId: string): Promise<void> {
  if (!(await lockOrderLedger(client, customerId, orderId))) throw new ToolError(`No order ${orderId} on this customer's account.`);
}

const RequestRow = z.object({
  request_id: z.string(),
  order_id: z.string(),
  amount_cents: z.number().int(),
  reason: z.string(),
  status: z.string(),
  kind: z.enum(['duplicate_charge', 'not_received', 'goodwill', 'partial']),
  charge_id: z.string().nullable(),
  overlaps: z.array(z.string()),
});
type RequestRow = z.infer<typeof RequestRow>;

const REQUEST_COLUMNS = 'request_id, order_id, amount_cents, reason, status, kind, charge_id, overlapping_requests AS overlaps';

/** request_refund's result: the request a human must now decide, with the order's ledger as it was filed. */
export interface RefundRequestResult {
  request_id: string;
  order_id: string;
  amount_cents: number;
  /** The order's currency (ISO 4217, e.g. "GBP"): amount_cents is in its minor unit. */
  currency: string;
  reason: string;
  status: string;
  kind: RefundKind;
  /** The charge it reverses; null for an order-level refund. */
  charge_id: string | null;
  /** Other pending requests asking for the same money (the same charge, or more duplicate than there is). */
  overlaps: string[];
  /** The order's ledger when the request was filed (this request among its pending ones). */
  ledger: OrderLedger;
}

function shapeRequest(row: RequestRow, currency: string, ledger: OrderLedger): RefundRequestResult {
  return {
    request_id: row.request_id,
    order_id: row.order_id,
    amount_cents: row.amount_cents,
    currency,
    reason: row.reason,
    status: row.status,
    kind: row.kind,
    charge_id: row.charge_id,
    overlaps: row.overlaps,
    ledger,
  };
}

async function ledgerOf(client: PoolClient, customerId: string, orderId: string): Promise<OrderLedger> {
  const ledger = await readOrderLedger(client, customerId, orderId);
  if (!ledger) throw new ToolError(`No order ${orderId} on this customer's account.`);
  return ledger;
}

/**
 * The charge a refund of this kind reverses: the one named, or for a duplicate charge the later
 * capture of an amount captured twice (the earlier one paid for the goods), for goods not
 * received the earliest capture. Null for the kinds that name only the order.
 */
export function chargeFor(ledger: OrderLedger, kind: RefundKind, named: string | undefined): string | null {
  if (!CHARGE_KINDS.includes(kind)) {
    if (named) throw new ToolError(`A ${kind} refund names the order, not a charge: leave charge_id out, or use kind duplicate_charge or not_received.`);
    return null;
  }
  if (named) {
    if (!ledger.charges.some((c) => c.charge_id === named)) {
      throw new ToolError(`Charge ${named} is not a captured charge of order ${ledger.order_id}; its charges are ${ledger.charges.map((c) => c.charge_id).join(', ') || 'none'}.`);
    }
    return named;
  }
  const unreversed = (c: LedgerCharge) => !ledger.refunds.some((r) => r.charge_id === c.charge_id);
  if (kind === 'duplicate_charge') {
    const duplicates = ledger.charges.filter((c, i) => ledger.charges.slice(0, i).some((e) => e.amount_cents === c.amount_cents));
    const chosen = duplicates.filter(unreversed).pop() ?? duplicates.pop();
    if (!chosen)
      throw new ToolError(
        `Order ${ledger.order_id} has no two captured charges of the same amount, so there is no duplicate charge to refund; name the charge with charge_id if one is wrong.`,
      );
    return chosen.charge_id;
  }
  const first = ledger.charges.find(unreversed) ?? ledger.charges[0];
  if (!first) throw new ToolError(`Order ${ledger.order_id} has no captured charge to refund.`);
  return first.charge_id;
}

/** The currency the order was charged in; the request's amount is in it, and so is every note about it. */
async function orderCurrency(client: PoolClient, customerId: string, orderId: string): Promise<string> {
  const { rows } = await client.query('SELECT currency FROM ledger_orders WHERE customer_id = $1 AND order_id = $2', [customerId, orderId]);
  return z.object({ currency: z.string().min(1) }).parse(rows[0]).currency;
}

async function requestByToolUse(client: PoolClient, customerId: string, context: ToolContext): Promise<RequestRow | undefined> {
  const { rows } = await client.query(`SELECT ${REQUEST_COLUMNS} FROM refund_requests WHERE customer_id = $1 AND workflow_id = $2 AND tool_use_id = $3`, [
    customerId,
    context.workflowId,
    context.toolUseId,
  ]);
  return rows.length ? RequestRow.parse(rows[0]) : undefined;
}

async function requestById(client: PoolClient, customerId: string, requestId: string): Promise<RequestRow | undefined> {
  const { rows } = await client.query(`SELECT ${REQUEST_COLUMNS} FROM refund_requests WHERE customer_id = $1 AND request_id = $2`, [customerId, requestId]);
  return rows.length ? RequestRow.parse(rows[0]) : undefined;
}

/**
 * Requests on an order still waiting for a decision or for their refund: money already spoken
 * for. Requests left undecided past their expiry (their investigation ended without deciding)
 * are marked expired first, so they stop reserving the amount.
 */
async function openRequests(client: PoolClient, customerId: string, orderId: string): Promise<RequestRow[]> {
  await client.query(
    `UPDATE refund_requests SET status = 'expired'
      WHERE customer_id = $1 AND order_id = $2 AND status = 'awaiting_approval' AND expires_at <= now()`,
    [customerId, orderId],
  );
  const { rows } = await client.query(
    `SELECT ${REQUEST_COLUMNS} FROM refund_requests
      WHERE customer_id = $1 AND order_id = $2 AND status IN ('awaiting_approval', 'approved') ORDER BY requested_at, request_id`,
    [customerId, orderId],
  );
  return rows.map((row) => RequestRow.parse(row));
}

/**
 * request_refund: records a request for a human to decide; decides nothing. A retry of the same
 * model call (same workflow and tool_use id) returns the same request. Refuses an order not on
 * the account, an amount above what can still be refunded counting requests still open, and a
 * refund the order's ledger could not honour even now (a charge already reversed, more than the
 * duplicate). A request for money another pending request may ask for too is filed, flagged as
 * overlapping it, so its approver sees both. The answer carries the order's ledger.
 */
export async function requestRefund(
  client: PoolClient,
  context: ToolContext,
  input: { order_id: string; amount_cents: number; reason: string; kind?: RefundKind; charge_id?: string },
  view: { order: ShopOrder; report: ProviderPayments; provider: string; shop: string },
): Promise<RefundRequestResult> {
  const { customerId } = context;
  await recordShopOrder(client, customerId, view.shop, view.order);
  await lockOrderRefunds(client, customerId, input.order_id);
  const earlier = await requestByToolUse(client, customerId, context);
  if (earlier) return shapeRequest(earlier, await orderCurrency(client, customerId, earlier.order_id), await ledgerOf(client, customerId, earlier.order_id));

  await recordProviderReport(client, customerId, input.order_id, view.provider, view.report);
  const payments = await readPayments(client, customerId, view.order, view.report);
  const open = await openRequests(client, customerId, input.order_id);
  const reserved = open.reduce((n, r) => n + r.amount_cents, 0);
  const available = Math.max(0, payments.refundable_cents - reserved);
  if (input.amount_cents > available) {
    // In money, as the order's currency shows it: the model may repeat this to the customer, who thinks in pounds, not in "cents" or request ids.
    const currency = await orderCurrency(client, customerId, input.order_id);
    const m = (minor: number) => formatMoney(minor, currency);
    const pending = open.length ? `, and ${m(reserved)} is already asked for in ${open.length === 1 ? 'a request' : `${open.length} requests`} awaiting a decision` : '';
    throw new ToolError(
      `Refund of ${m(input.amount_cents)} refused: order ${input.order_id} was charged ${m(payments.charged_cents)}, ` +
        `${m(payments.refunded_cents)} is already refunded${pending}, so at most ${m(available)} can be requested.`,
    );
  }
  const ledger = await ledgerOf(client, customerId, input.order_id);
  const kind = input.kind ?? 'partial';
  const ask = { amount_cents: input.amount_cents, kind, charge_id: chargeFor(ledger, kind, input.charge_id) };
  const problem = ledgerProblem(ledger, ask);
  if (problem) throw new ToolError(`${LEDGER_REFUSAL}${problem}. Nothing was requested.`);
  const overlaps = overlappingRequests(ledger, ask).map((p) => p.request_id);

  const requestId = stableId('req', context.workflowId, context.toolUseId);
  const inserted = await client.query(
    `INSERT INTO refund_requests (request_id, customer_id, order_id, amount_cents, reason, workflow_id, tool_use_id, kind, charge_id, overlapping_requests)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING RETURNING ${REQUEST_COLUMNS}`,
    [requestId, customerId, input.order_id, input.amount_cents, input.reason.trim(), context.workflowId, context.toolUseId, kind, ask.charge_id, overlaps],
  );
  const row = inserted.rows[0] ? RequestRow.parse(inserted.rows[0]) : await requestByToolUse(client, customerId, context);
  if (!row) throw new Error(`refund request ${requestId} was neither inserted nor found`);
  return shapeRequest(row, await orderCurrency(client, customerId, row.order_id), await ledgerOf(client, customerId, row.order_id));
}

const DecisionRow = z.object({
  request_id: z.string(),
  decision: z.enum(['approved', 'denied']),
  approver: z.string(),
  reason: z.string().nullable(),
  decided_at: isoTimestamp,
  approval_id: z.string().nullable(),
});
type DecisionRow = z.infer<typeof DecisionRow>;

async function decisionFor(client: PoolClient, customerId: string, requestId: string): Promise<DecisionRow | undefined> {
  const { rows } = await client.query('SELECT request_id, decision, approver, reason, decided_at, approval_id FROM refund_decisions WHERE customer_id = $1 AND request_id = $2', [
    customerId,
    requestId,
  ]);
  return rows.length ? DecisionRow.parse(rows[0]) : undefined;
}

/** What the workflow records once a human (or the approval timer) has decided. */
export const RefundDecisionInput = z.object({
  customerId: z.string().min(1),
  requestId: z.string().min(1),
  decision: z.enum(['approved', 'denied']),
  approver: z.string().min(1).max(200),
  /** The person as they named themselves (console sign-in, the CLI's --approver); the approver when absent. */
  decidedBy: z.string().min(1).max(200).nullish(),
  /** Through what the decision came: the console key's label, "cli", "http". */
  decidedVia: z.string().min(1).max(200).nullish(),
  reason: z.string().max(2000).nullish(),
  decidedAt: z.iso.datetime({ offset: true }),
});
/** recordRefundDecision's input. */
export type RefundDecisionInput = z.input<typeof RefundDecisionInput>;

/** recordRefundDecision's result: the decision on record (the first one), with its approval id when approved. */
export interface RecordedDecision {
  approvalId: string | null;
  decision: 'approved' | 'denied';
  approver: string;
  decidedAt: string;
}

/**
 * Records a human's decision on a refund request and moves the request's status along. The
 * first decision wins: a retry, or a second decision, returns the one already recorded.
 */
export async function recordDecision(client: PoolClient, input: z.output<typeof RefundDecisionInput>): Promise<RecordedDecision> {
  const { customerId, requestId } = input;
  const request = await requestById(client, customerId, requestId);
  if (!request) {
    throw new NotFoundError(`No refund request ${requestId} for customer ${customerId}.`);
  }
  await client.query(
    `INSERT INTO refund_decisions (request_id, customer_id, decision, approver, reason, decided_at, approval_id, decided_by, decided_via)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (request_id) DO NOTHING`,
    [
      requestId,
      customerId,
      input.decision,
      input.approver,
      input.reason ?? null,
      input.decidedAt,
      input.decision === 'approved' ? stableId('apr', requestId) : null,
      input.decidedBy ?? input.approver,
      input.decidedVia ?? null,
    ],
  );
  const recorded = (await decisionFor(client, customerId, requestId))!;
  await client.query(`UPDATE refund_requests SET status = $3 WHERE customer_id = $1 AND request_id = $2 AND status = 'awaiting_approval'`, [
    customerId,
    requestId,
    recorded.decision,
  ]);
  return { approvalId: recorded.approval_id, decision: recorded.decision, approver: recorded.approver, decidedAt: recorded.decided_at };
}

const RefundRow = z.object({
  refund_id: z.string(),
  request_id: z.string(),
  order_id: z.string(),
  amount_cents: z.number().int(),
  currency: z.string(),
  kind: RequestRow.shape.kind,
  charge_id: z.string().nullable(),
});

/** issue_refund's result: the refund paid, and the order's ledger after it. */
export interface IssuedRefund {
  refund_id: string;
  request_id: string;
  order_id: string;
  amount_cents: number;
  currency: string;
  kind: RefundKind;
  charge_id: string | null;
  status: 'issued';
  ledger: OrderLedger;
}

/** issueRefund's answer when the ledger cannot honour the approval: the request is marked refused, in these words. */
export interface RefusedRefund {
  status: 'refused';
  request_id: string;
  reason: string;
}

async function refundForApproval(client: PoolClient, customerId: string, approvalId: string): Promise<IssuedRefund | undefined> {
  const { rows } = await client.query('SELECT refund_id, request_id, order_id, amount_cents, currency, kind, charge_id FROM refunds WHERE customer_id = $1 AND approval_id = $2', [
    customerId,
    approvalId,
  ]);
  if (!rows.length) return undefined;
  const row = RefundRow.parse(rows[0]);
  return { ...row, status: 'issued', ledger: await ledgerOf(client, customerId, row.order_id) };
}

async function markRefused(client: PoolClient, customerId: string, requestId: string, reason: string): Promise<RefusedRefund> {
  await client.query(`UPDATE refund_requests SET status = 'refused' WHERE customer_id = $1 AND request_id = $2 AND status = 'approved'`, [customerId, requestId]);
  return { status: 'refused', request_id: requestId, reason };
}

/** A refund reserved in the ledger and its payout (absent for refunds paid before payouts were recorded). */
export interface ReservedRefund {
  refund: IssuedRefund;
  approvalId: string;
  payout: PayoutRow | undefined;
}

/** The amounts of the order's payouts asked for and not yet answered, by charge. */
async function sendingPayouts(client: PoolClient, customerId: string, orderId: string): Promise<{ charge_id: string; amount_cents: number }[]> {
  const { rows } = await client.query(
    `SELECT o.charge_id, f.amount_cents FROM refund_payouts o JOIN refunds f ON f.refund_id = o.refund_id
      WHERE f.customer_id = $1 AND f.order_id = $2 AND o.status = 'sending'`,
    [customerId, orderId],
  );
  return rows as { charge_id: string; amount_cents: number }[];
}

/**
 * issue_refund's first half, in one transaction: reserves the refund only when code has recorded
 * a human approval for it, once per approval (a retry finds the same refund and payout), and only
 * when the order's ledger, with the provider's report just recorded, can honour it (checked here
 * under the order's lock, and again by the database's trigger). The payout is recorded with it
 * ('sending', its charge and idempotency key fixed). A ledger refusal marks the request refused
 * and is answered, not thrown: the refusal is committed. Anything else is a ToolError saying why.
 */
export async function reserveRefund(
  client: PoolClient,
  customerId: string,
  requestId: string,
  provider: { name: string; report: ProviderPayments; order?: { shop: string; order: ShopOrder } },
): Promise<ReservedRefund | RefusedRefund> {
  const request = await requestById(client, customerId, requestId);
  if (!request) throw new ToolError(`No refund request ${requestId} on this customer's account.`);
  if (provider.order) await recordShopOrder(client, customerId, provider.order.shop, provider.order.order);
  await lockOrderRefunds(client, customerId, request.order_id);
  const decision = await decisionFor(client, customerId, requestId);
  if (!decision) {
    throw new ToolError(
      `Refund request ${requestId} has no recorded approval: it is still awaiting a human decision, so no refund can be issued. ` + 'Do not tell the customer a refund is coming.',
    );
  }
  if (decision.decision !== 'approved' || !decision.approval_id) {
    throw new ToolError(
      `Refund request ${requestId} was denied by ${decision.approver}${decision.reason ? ` (${decision.reason})` : ''}, so it cannot be issued. ` +
        'Tell the customer honestly and offer the next step.',
    );
  }
  const approvalId = decision.approval_id;
  const already = await refundForApproval(client, customerId, approvalId);
  if (already) return { refund: already, approvalId, payout: await payoutOf(client, already.refund_id) };
  if (request.status === 'refused')
    return { status: 'refused', request_id: requestId, reason: `${LEDGER_REFUSAL}refund request ${requestId} was already refused; nothing was paid.` };

  await recordProviderReport(client, customerId, request.order_id, provider.name, provider.report);
  const ledger = await ledgerOf(client, customerId, request.order_id);
  const problem = ledgerProblem(ledger, { request_id: requestId, amount_cents: request.amount_cents, kind: request.kind, charge_id: request.charge_id });
  if (problem) return markRefused(client, customerId, requestId, `${LEDGER_REFUSAL}${problem}; nothing was paid.`);
  const chargeId = payoutCharge(request, provider.report, await sendingPayouts(client, customerId, request.order_id));
  if (!chargeId) {
    const m = formatMoney(request.amount_cents, ledger.currency);
    throw new ToolError(providerRefusal(requestId, `no one captured charge of order ${request.order_id} has ${m} left to refund, and a refund reverses one charge`));
  }
  const refundId = stableId('rfd', approvalId);
  await client.query('SAVEPOINT ledger_check');
  try {
    await client.query(
      `INSERT INTO refunds (refund_id, customer_id, approval_id, request_id, order_id, amount_cents)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (approval_id) DO NOTHING`,
      [refundId, customerId, approvalId, requestId, request.order_id, request.amount_cents],
    );
  } catch (error) {
    if (!isLedgerRefusal(error)) throw error;
    // The database's own check: the ledger changed under a caller that skipped the lock.
    await client.query('ROLLBACK TO SAVEPOINT ledger_check');
    return markRefused(client, customerId, requestId, `${LEDGER_REFUSAL}${error.message}; nothing was paid.`);
  }
  const payout = await startPayout(client, customerId, {
    refund_id: refundId,
    provider: provider.name,
    idempotency_key: payoutKey(approvalId),
    charge_id: chargeId,
    reason: payoutReason(request.kind),
  });
  await client.query(`UPDATE refund_requests SET status = 'refunded' WHERE customer_id = $1 AND request_id = $2`, [customerId, requestId]);
  return { refund: (await refundForApproval(client, customerId, approvalId))!, approvalId, payout };
}

/**
 * issue_refund: reserves the refund (reserveRefund), then pays it through the payment provider
 * with the approval's idempotency key and records the answer (sendPayout). A retry after any
 * failure finds the reservation and sends the same request again; the provider makes one refund.
 * Answers the refund with the order's ledger after it, or the ledger's refusal.
 */
export async function issueRefund(deps: { pool: Pool; commerce: Commerce }, customerId: string, requestId: string): Promise<IssuedRefund | RefusedRefund> {
  const { payments } = deps.commerce;
  const request = await withCustomer(deps.pool, customerId, (client) => requestById(client, customerId, requestId));
  if (!request) throw new ToolError(`No refund request ${requestId} on this customer's account.`);
  // The order as the shop holds it now (its total bounds a duplicate-charge refund); one the shop
  // no longer reports keeps what it reported when the request was filed.
  const order = await deps.commerce.orders.order(customerId, request.order_id);
  const report = await payments.paymentsOf(customerId, request.order_id);
  const reserved = await withCustomer(deps.pool, customerId, (client) =>
    reserveRefund(client, customerId, requestId, { name: payments.name, report, ...(order ? { order: { shop: deps.commerce.orders.name, order } } : {}) }),
  );
  if ('status' in reserved) return reserved;
  const { refund, payout } = reserved;
  if (payout?.status === 'refused') throw new ToolError(providerRefusal(requestId, payout.failure_reason ?? 'refused'));
  if (!payout || payout.status !== 'sending') return refund;
  await sendPayout({ pool: deps.pool, payments }, customerId, refund, payout, reserved.approvalId);
  return withCustomer(deps.pool, customerId, async (client) => ({ ...refund, ledger: await ledgerOf(client, customerId, refund.order_id) }));
}

/** request_refund, issue_refund and the workflow's recordRefundDecision over the pool and the shop's systems. */
export function createRefundTools(deps: { pool: Pool; commerce: Commerce }) {
  const { payments } = deps.commerce;
  return {
    request_refund: defineTypedTool('request_refund', async (input, context) => {
      const view = await readProviderView(deps.commerce, context.customerId, input.order_id);
      return withCustomer(deps.pool, context.customerId, (client) => requestRefund(client, context, input, { ...view, provider: payments.name, shop: deps.commerce.orders.name }));
    }),
    issue_refund: defineTool('issue_refund', async ({ request_id }, context) => {
      const paid = await issueRefund(deps, context.customerId, request_id);
      // Thrown after the commit: the request stays marked refused, and the caller reads why.
      if (paid.status === 'refused') throw new ToolError(paid.reason);
      return paid;
    }),
    /** Records the first human decision on a refund request (not a tool: the workflow calls it). */
    async recordRefundDecision(input: RefundDecisionInput): Promise<RecordedDecision> {
      const parsed = RefundDecisionInput.safeParse(input);
      if (!parsed.success) {
        const problems = describeIssues(parsed.error);
        throw new BadInputError(`invalid refund decision: ${problems}`);
      }
      return withCustomer(deps.pool, parsed.data.customerId, (client) => recordDecision(client, parsed.data));
    },
  };
}
