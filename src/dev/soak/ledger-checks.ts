import type { Pool } from 'pg';
import { z } from 'zod';

// What the soak's investigations left in Postgres, read straight from the server (not through
// the fault proxy) once everything has settled: the refund trail and the case records, counted
// so that a duplicated side effect or a lost one shows as a number.

const PerKey = z.object({ key: z.string(), n: z.coerce.number().int() });
const RefundByRequest = z.object({ request_id: z.string(), workflow_id: z.string(), status: z.string(), refunds: z.coerce.number().int(), decision: z.string().nullable() });

/** The refund trail and case records of the soak's investigations. */
export interface Ledger {
  refundRequests: number;
  /** Requests per workflow and tool_use id above one (the schema forbids it; counted anyway). */
  requestsPerToolUseOverOne: number;
  /** Investigations that filed more than one refund request. */
  investigationsWithSeveralRequests: number;
  approvalsRecorded: number;
  refundsPaid: number;
  /** Per request: its workflow, status, recorded decision and how many refunds it paid. */
  byRequest: z.infer<typeof RefundByRequest>[];
  /** Approvals that paid more than once (refunds per approval_id above one). */
  refundsPerApprovalOverOne: number;
  /** Case records per investigation (memory_cases by source run). */
  casesByWorkflow: Map<string, number>;
  /** Requests still awaiting a decision or approved but unpaid. */
  openRequests: number;
}

/** Reads the ledger of investigations whose workflow ids start with `workflowPrefix`. */
export async function readLedger(admin: Pool, workflowPrefix: string): Promise<Ledger> {
  const like = `${workflowPrefix}%`;
  const q = async (sql: string, params: unknown[] = [like]): Promise<Record<string, unknown>[]> => (await admin.query<Record<string, unknown>>(sql, params)).rows;
  const requestsPerToolUse = (
    await q(`SELECT workflow_id || ' ' || tool_use_id AS key, count(*) AS n FROM refund_requests WHERE workflow_id LIKE $1 GROUP BY 1 HAVING count(*) > 1`)
  ).map((r) => PerKey.parse(r));
  const severalRequests = (await q(`SELECT workflow_id AS key, count(*) AS n FROM refund_requests WHERE workflow_id LIKE $1 GROUP BY 1 HAVING count(*) > 1`)).map((r) =>
    PerKey.parse(r),
  );
  const byRequest = (
    await q(
      `SELECT r.request_id, r.workflow_id, r.status, d.decision,
            (SELECT count(*) FROM refunds f WHERE f.request_id = r.request_id) AS refunds
       FROM refund_requests r LEFT JOIN refund_decisions d ON d.request_id = r.request_id
      WHERE r.workflow_id LIKE $1 ORDER BY r.workflow_id`,
    )
  ).map((r) => RefundByRequest.parse(r));
  const perApproval = (
    await q(
      `SELECT f.approval_id AS key, count(*) AS n FROM refunds f JOIN refund_requests r ON r.request_id = f.request_id
      WHERE r.workflow_id LIKE $1 GROUP BY 1 HAVING count(*) > 1`,
    )
  ).map((r) => PerKey.parse(r));
  const cases = (await q(`SELECT source_run AS key, count(*) AS n FROM memory_cases WHERE source_run LIKE $1 GROUP BY 1`)).map((r) => PerKey.parse(r));
  return {
    refundRequests: byRequest.length,
    requestsPerToolUseOverOne: requestsPerToolUse.length,
    investigationsWithSeveralRequests: severalRequests.length,
    approvalsRecorded: byRequest.filter((r) => r.decision === 'approved').length,
    refundsPaid: byRequest.reduce((n, r) => n + r.refunds, 0),
    byRequest,
    refundsPerApprovalOverOne: perApproval.length,
    casesByWorkflow: new Map(cases.map((c) => [c.key, c.n])),
    openRequests: byRequest.filter((r) => r.status === 'awaiting_approval' || (r.status === 'approved' && r.refunds === 0)).length,
  };
}
