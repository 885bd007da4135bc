import type { PoolClient } from 'pg';
import { z } from 'zod';
import { isoTimestamp } from './rows';

// The trail of money-moving MCP calls (migrations/031_mcp_calls.sql): one function per
// statement, every row parsed. Callers run these inside withCustomer (row-level security).

const RequestRow = z.object({
  request_id: z.string(),
  workflow_id: z.string(),
  tool: z.string(),
  server: z.string(),
  server_tool: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  amount_cents: z.number().int().nullable(),
  status: z.string(),
});
/** A request for a money-moving call. */
export type McpRequestRow = z.infer<typeof RequestRow>;

const REQUEST_COLUMNS = 'request_id, workflow_id, tool, server, server_tool, arguments, amount_cents, status';

/** Files a request once per model call: a retry (same workflow and tool_use id) finds the one filed. */
export async function insertMcpRequest(
  client: PoolClient,
  row: {
    requestId: string;
    customerId: string;
    workflowId: string;
    toolUseId: string;
    tool: string;
    server: string;
    serverTool: string;
    args: Record<string, unknown>;
    amountCents: number | null;
  },
): Promise<McpRequestRow> {
  await client.query(
    `INSERT INTO mcp_call_requests (request_id, customer_id, workflow_id, tool_use_id, tool, server, server_tool, arguments, amount_cents)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
    [row.requestId, row.customerId, row.workflowId, row.toolUseId, row.tool, row.server, row.serverTool, JSON.stringify(row.args), row.amountCents],
  );
  const { rows } = await client.query(`SELECT ${REQUEST_COLUMNS} FROM mcp_call_requests WHERE customer_id = $1 AND workflow_id = $2 AND tool_use_id = $3`, [
    row.customerId,
    row.workflowId,
    row.toolUseId,
  ]);
  return RequestRow.parse(rows[0]);
}

/** A request by id, or undefined. */
export async function mcpRequestById(client: PoolClient, customerId: string, requestId: string): Promise<McpRequestRow | undefined> {
  const { rows } = await client.query(`SELECT ${REQUEST_COLUMNS} FROM mcp_call_requests WHERE customer_id = $1 AND request_id = $2`, [customerId, requestId]);
  return rows.length ? RequestRow.parse(rows[0]) : undefined;
}

/** Marks a request waiting for a decision as decided (approved or denied); a request already moved on keeps its status. */
export async function markMcpRequestDecided(client: PoolClient, customerId: string, requestId: string, decision: 'approved' | 'denied'): Promise<void> {
  await client.query(`UPDATE mcp_call_requests SET status = $3 WHERE customer_id = $1 AND request_id = $2 AND status = 'awaiting_approval'`, [customerId, requestId, decision]);
}

/** Moves a request's status along (approved, denied, called, failed, unknown). */
export async function setMcpRequestStatus(client: PoolClient, customerId: string, requestId: string, status: string): Promise<void> {
  await client.query('UPDATE mcp_call_requests SET status = $3 WHERE customer_id = $1 AND request_id = $2', [customerId, requestId, status]);
}

const DecisionRow = z.object({
  decision: z.enum(['approved', 'denied']),
  approver: z.string(),
  reason: z.string().nullable(),
  decided_at: isoTimestamp,
  approval_id: z.string().nullable(),
});
/** A person's decision on a request. */
export type McpDecisionRow = z.infer<typeof DecisionRow>;

/** Records a decision; the first one wins, and the one on record is returned. */
export async function insertMcpDecision(
  client: PoolClient,
  row: {
    requestId: string;
    customerId: string;
    decision: 'approved' | 'denied';
    approver: string;
    decidedBy: string;
    decidedVia: string | null;
    reason: string | null;
    decidedAt: string;
    approvalId: string | null;
  },
): Promise<McpDecisionRow> {
  await client.query(
    `INSERT INTO mcp_call_decisions (request_id, customer_id, decision, approver, decided_by, decided_via, reason, decided_at, approval_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (request_id) DO NOTHING`,
    [row.requestId, row.customerId, row.decision, row.approver, row.decidedBy, row.decidedVia, row.reason, row.decidedAt, row.approvalId],
  );
  return (await mcpDecisionFor(client, row.customerId, row.requestId))!;
}

/** The decision on a request, or undefined while it waits. */
export async function mcpDecisionFor(client: PoolClient, customerId: string, requestId: string): Promise<McpDecisionRow | undefined> {
  const { rows } = await client.query('SELECT decision, approver, reason, decided_at, approval_id FROM mcp_call_decisions WHERE customer_id = $1 AND request_id = $2', [
    customerId,
    requestId,
  ]);
  return rows.length ? DecisionRow.parse(rows[0]) : undefined;
}

const CallRow = z.object({
  idempotency_key: z.string(),
  attempts: z.number().int(),
  outcome: z.enum(['succeeded', 'failed', 'unknown']).nullable(),
  result: z.string().nullable(),
});
/** The call made on an approval: in flight (outcome null) or finished. */
export type McpCallRow = z.infer<typeof CallRow>;

/** The call on an approval, locked for this transaction, or undefined when none was started. */
export async function lockMcpCall(client: PoolClient, customerId: string, approvalId: string): Promise<McpCallRow | undefined> {
  const { rows } = await client.query('SELECT idempotency_key, attempts, outcome, result FROM mcp_calls WHERE customer_id = $1 AND approval_id = $2 FOR UPDATE', [
    customerId,
    approvalId,
  ]);
  return rows.length ? CallRow.parse(rows[0]) : undefined;
}

/** Records that the call on an approval is about to be made (before the server is asked). */
export async function startMcpCall(client: PoolClient, row: { approvalId: string; customerId: string; requestId: string; idempotencyKey: string }): Promise<void> {
  await client.query('INSERT INTO mcp_calls (approval_id, customer_id, request_id, idempotency_key) VALUES ($1, $2, $3, $4)', [
    row.approvalId,
    row.customerId,
    row.requestId,
    row.idempotencyKey,
  ]);
}

/** Counts another attempt at a call found in flight. */
export async function retryMcpCall(client: PoolClient, customerId: string, approvalId: string): Promise<void> {
  await client.query('UPDATE mcp_calls SET attempts = attempts + 1 WHERE customer_id = $1 AND approval_id = $2', [customerId, approvalId]);
}

/** Records how the call ended; a call already finished keeps its first outcome, which is returned. */
export async function finishMcpCall(client: PoolClient, customerId: string, approvalId: string, outcome: 'succeeded' | 'failed' | 'unknown', result: string): Promise<McpCallRow> {
  await client.query('UPDATE mcp_calls SET outcome = $3, result = $4, finished_at = now() WHERE customer_id = $1 AND approval_id = $2 AND outcome IS NULL', [
    customerId,
    approvalId,
    outcome,
    result,
  ]);
  return (await lockMcpCall(client, customerId, approvalId))!;
}
