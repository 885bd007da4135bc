import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { createBulkReadActivities } from '../../activities/bulk-read';
import { demoTickets } from '../../commerce/demo';
import { stepTable, totalsLine } from '../../client/format';
import { decideRefund, deliverAndWait, waitUntilSettled } from '../../client/investigations';
import type { Config } from '../../config';
import { DEMO } from '../demo-data/seed';
import { exampleEvent } from '../demo/run';
import { startLocalStack } from '../env/stack';
import type { TicketEvent } from '../../schemas/event';
import type { InvestigationStatus } from '../../schemas/investigation';
import { investigationSettings } from '../../settings';

type Out = (line: string) => void;

/** One run of a workflow execution chain (continue-as-new makes several), as the server reports it. */
export interface RunSize {
  runId: string;
  events: number;
  bytes: number;
}

/** Every run of `workflowId`, oldest first, with its history length and size from the server. */
export async function historySizes(client: Client, workflowId: string): Promise<RunSize[]> {
  const runs: RunSize[] = [];
  for await (const execution of client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
    const described = await client.workflow.getHandle(workflowId, execution.runId).describe();
    runs.push({
      runId: execution.runId,
      events: described.historyLength,
      bytes: Number(described.raw.workflowExecutionInfo?.historySizeBytes ?? 0),
    });
  }
  return runs.reverse();
}

/** Runs an event to its reply, approving any refund request as `approver`. */
export async function runToReply(
  client: Client,
  pool: Pool | null,
  config: Config,
  event: TicketEvent,
  approver = 'support-lead',
  timeoutMs = 300_000,
): Promise<InvestigationStatus> {
  let status = await deliverAndWait(client, pool, event, { taskQueue: config.TEMPORAL_TASK_QUEUE, settings: investigationSettings(config), timeoutMs });
  while (status.status === 'awaiting_approval' && status.pendingApproval) {
    await decideRefund(client, status.workflowId, { requestId: status.pendingApproval.request_id, decision: 'approved', approver });
    status = await waitUntilSettled(client, status.workflowId, { afterStep: status.step, timeoutMs });
  }
  return status;
}

/**
 * The workflow half of `casework bench context`: the real Investigation on the dev server with
 * the offline model, over the demo dispute (tokens per step, the bulk-read helper beside
 * reading inline) and over scripted 30- and 200-step runs (history size per run).
 */
export async function runWorkflowBench(config: Config, options: { out: Out; json?: boolean; longRuns?: number[] }): Promise<unknown> {
  const out = options.out;
  const longRuns = options.longRuns ?? [30, 200];
  // A run continues as new every 100 steps here (or sooner when the server suggests it), so the table shows per-run sizes.
  const longConfig = { ...config, CASEWORK_MAX_STEPS: Math.max(...longRuns, config.CASEWORK_MAX_STEPS) + 10, CASEWORK_MAX_STEPS_PER_RUN: 100 };
  const stack = await startLocalStack(longConfig, { inMemoryDb: true });
  try {
    const tag = `bench${Date.now().toString(36)}`;
    const dispute = await runToReply(stack.client, stack.db.app, longConfig, exampleEvent('dana-5102', tag));
    const review = await createBulkReadActivities({ tickets: demoTickets(stack.db.app), model: stack.model }).review_tickets({
      name: 'review_tickets',
      input: { question: 'Which earlier tickets mention a parcel marked delivered that never arrived?' },
      context: { customerId: DEMO.customers.dana, ticketId: 'bench', workflowId: 'bench', toolUseId: `bench-${tag}` },
    });
    const bulk = JSON.parse(review.content) as { tickets_read: number; tokens_read_by_helper: number; tokens_returned: number; tokens_if_read_inline: number };
    const sizes: { steps: number; workflowId: string; runs: RunSize[]; seconds: number }[] = [];
    for (const steps of longRuns) {
      const started = Date.now();
      const event = exampleEvent('dana-5102', `${tag}-${steps}`, { message: `Scripted long investigation of order 5102. #drill:${steps}` });
      const status = await runToReply(stack.client, stack.db.app, longConfig, event, 'support-lead', 900_000);
      sizes.push({ steps: status.step, workflowId: status.workflowId, runs: await historySizes(stack.client, status.workflowId), seconds: (Date.now() - started) / 1000 });
    }
    const result = { model: stack.model.label, dispute: { workflowId: dispute.workflowId, steps: dispute.steps, totals: dispute.totals }, bulk_read: bulk, long_runs: sizes };
    if (options.json) {
      out(JSON.stringify(result, null, 2));
      return result;
    }
    out('');
    out(`The real workflow on the dev server (${stack.model.label}), demo dispute ${dispute.workflowId}:`);
    for (const line of stepTable(dispute.steps)) out(`  ${line}`);
    out(`  ${totalsLine(dispute)}`);
    out('');
    out(
      `Bulk read in a sub-agent: review_tickets read ${bulk.tickets_read} tickets (${bulk.tokens_read_by_helper.toLocaleString('en-US')} tokens in the helper's own context); ` +
        `${bulk.tokens_returned} tokens entered the investigation, against ${bulk.tokens_if_read_inline.toLocaleString('en-US')} had it read them inline.`,
    );
    out('');
    out('History per run (continue-as-new starts a new run when the server suggests it):');
    out('  steps  runs  events per run            bytes per run                     wall time');
    for (const s of sizes) {
      out(
        `  ${String(s.steps).padStart(5)}  ${String(s.runs.length).padStart(4)}  ${s.runs
          .map((r) => r.events)
          .join(' / ')
          .padEnd(24)}  ` +
          `${s.runs
            .map((r) => r.bytes.toLocaleString('en-US'))
            .join(' / ')
            .padEnd(32)}  ${s.seconds.toFixed(1)} s`,
      );
    }
    return result;
  } finally {
    await stack.stop();
  }
}
