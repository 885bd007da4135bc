import { performance } from 'node:perf_hooks';
import { decideRefund, deliverEvent, waitUntilSettled } from '../src/client/investigations';
import { loadConfig } from '../src/config';
import { exampleEvent } from '../src/dev/demo/run';
import { startLocalStack } from '../src/dev/env/stack';
import { investigationSettings } from '../src/settings';

// Round-trip time of a refund decision through the validated update, on the dev server with a
// worker in this process: refusals (rejected by the validator, nothing written to history) and
// acceptances (written to history, the workflow resumes). Prints a table.

const SAMPLES = Number(process.argv[2] ?? 20);

function stats(ms: number[]): string {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return `${String(sorted.length).padStart(7)}  ${at(0.5).toFixed(1).padStart(9)}  ${at(0.95).toFixed(1).padStart(7)}  ${at(1).toFixed(1).padStart(7)}`;
}

async function main(): Promise<void> {
  const config = { ...loadConfig(), CASEWORK_LOG_LEVEL: 'warn' as const };
  const stack = await startLocalStack(config, { inMemoryDb: true });
  try {
    const refused: number[] = [];
    const accepted: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const event = exampleEvent(i % 2 ? 'double-charge' : 'dana-5102', `upd${Date.now().toString(36)}${i}`);
      const { workflowId } = await deliverEvent(stack.client, stack.db.app, event, { taskQueue: config.TEMPORAL_TASK_QUEUE, settings: investigationSettings(config) });
      const paused = await waitUntilSettled(stack.client, workflowId, { pollMs: 50 });
      if (!paused.pendingApproval) continue;
      const requestId = paused.pendingApproval.request_id;
      let started = performance.now();
      await decideRefund(stack.client, workflowId, { requestId, decision: 'approved', approver: 'mallory' }).catch(() => undefined);
      refused.push(performance.now() - started);
      started = performance.now();
      await decideRefund(stack.client, workflowId, { requestId, decision: i % 2 ? 'denied' : 'approved', approver: 'support-lead' });
      accepted.push(performance.now() - started);
    }
    console.log('refund decision over the update (ms)');
    console.log('outcome                       samples     median      p95      max');
    console.log(`refused by the validator      ${stats(refused)}`);
    console.log(`accepted, workflow resumes    ${stats(accepted)}`);
  } finally {
    await stack.stop();
  }
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
