import type { Client } from '@temporalio/client';
import { type temporal } from '@temporalio/proto';
import type { Pool } from 'pg';
import { createToolActivities } from '../../activities/tools';
import { resultText } from '../../context/references';
import type { Config } from '../../config';
import { deliverAndWait } from '../../client/investigations';
import { TranscriptLog } from '../../db/transcript-log';
import type { CarriedState, InvestigationInput } from '../../schemas/investigation';
import type { LogEntry } from '../../schemas/transcript-log';
import { investigationSettings } from '../../settings';
import { bodyCodecOf } from '../../temporal/codec/body-codec';
import { codecFor } from '../../temporal/data-converter';
import { decodeHistoryPayloads } from '../../temporal/history-payloads';
import { exampleEvent } from '../demo/run';
import { startLocalStack } from '../env/stack';
import { historyBreakdown, printBreakdown } from './history-breakdown';
import { historySizes } from './workflow';

type Out = (line: string) => void;

// `casework bench history`: what one investigation costs Temporal and Postgres as it grows,
// its transcript kept by reference in the transcript log. A scripted investigation (the offline
// model's drill: a tracking page per step, a note every fifth) over an order whose tracking pages
// are padded to about 4,000 tokens each, at several lengths, continuing as new every 100 steps.

/** The order the drill reads; its tracking events are padded in the bench's own database. */
const ORDER = '5102';
/** Characters each tracking event's description is padded to: five a page make about 4,000 tokens. */
const PADDED_CHARS = 3_150;
/** Steps per run before continue-as-new, so long runs show what they carry. */
const STEPS_PER_RUN = 100;

/** One measured investigation. */
export interface HistorySample {
  steps: number;
  runs: number;
  historyBytes: number;
  events: number;
  /** The largest carried state a continuation started with (JSON bytes), 0 when none. */
  carriedBytes: number;
  /** payload_blobs + transcript_log + model_replies bytes of this investigation. */
  postgresBytes: number;
  /** The conversation's own size: its entries as JSON. */
  transcriptBytes: number;
  /** Tool results compared word for word with the tool's own answer, and how many matched. */
  resultsChecked: number;
  resultsMatched: number;
  meanResultTokens: number;
}

/** Pads the drill order's tracking events in the bench's own database so each page is about 4,000 tokens. */
async function padTracking(admin: Pool): Promise<void> {
  await admin.query(
    `UPDATE tracking_events SET description = left(description || ' ' || repeat('Sorting-centre scan ' || event_id || ', conveyor belt read, bag sealed, next hop confirmed. ', 60), $2)
      WHERE order_id = $1`,
    [ORDER, PADDED_CHARS],
  );
}

async function carriedSizes(client: Client, workflowId: string, runIds: string[]): Promise<number> {
  let largest = 0;
  for (const runId of runIds.slice(1)) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes as temporal.api.history.v1.IWorkflowExecutionStartedEventAttributes | undefined;
    const [input] = (await decodeHistoryPayloads(client.options.loadedDataConverter, started?.input?.payloads)) as InvestigationInput[];
    const carried: CarriedState | undefined = input?.carried;
    if (carried) largest = Math.max(largest, Buffer.byteLength(JSON.stringify(carried)));
  }
  return largest;
}

async function postgresBytes(admin: Pool, workflowId: string): Promise<number> {
  const blobs = await admin.query<{ n: string }>('SELECT coalesce(sum(size_bytes), 0)::bigint AS n FROM payload_blobs WHERE workflow_id = $1', [workflowId]);
  const log = await admin.query<{ n: string }>('SELECT coalesce(sum(pg_column_size(t.*)), 0)::bigint AS n FROM transcript_log t WHERE workflow_id = $1', [workflowId]);
  const replies = await admin.query<{ n: string }>('SELECT coalesce(sum(pg_column_size(r.*)), 0)::bigint AS n FROM model_replies r WHERE workflow_id = $1', [workflowId]);
  return Number(blobs.rows[0]?.n ?? 0) + Number(log.rows[0]?.n ?? 0) + Number(replies.rows[0]?.n ?? 0);
}

/** Every tracking result in the log compared with what the tool answers for the same input now (the records do not change). */
async function checkResults(pool: Pool, entries: LogEntry[], workflowId: string): Promise<{ checked: number; matched: number; meanTokens: number }> {
  const tools = createToolActivities({ pool });
  const calls = new Map<string, { input: unknown }>();
  let checked = 0;
  let matched = 0;
  let tokens = 0;
  for (const entry of entries) {
    const block = entry.body as { type: string; id?: string; name?: string; input?: unknown; tool_use_id?: string; content?: unknown };
    if (block.type === 'tool_use' && block.name === 'get_tracking_events') calls.set(block.id!, { input: block.input });
    if (block.type !== 'tool_result') continue;
    const call = calls.get(block.tool_use_id!);
    if (!call) continue;
    const context = { workflowId, ticketId: '', customerId: 'cust_dana', toolUseId: block.tool_use_id! };
    const fresh = await tools.get_tracking_events({ name: 'get_tracking_events', input: call.input, context });
    checked += 1;
    tokens += entry.tokens;
    if (fresh.content === resultText(block.content)) matched += 1;
  }
  return { checked, matched, meanTokens: checked ? tokens / checked : 0 };
}

/** Runs the bench and prints its table; returns the samples. */
export async function runHistoryBench(config: Config, options: { out: Out; steps?: number[]; json?: boolean; timeoutMs?: number; breakdown?: boolean }): Promise<HistorySample[]> {
  const lengths = options.steps ?? [30, 200, 500];
  const longest = Math.max(...lengths);
  const runConfig = { ...config, CASEWORK_MAX_STEPS: longest + 10, CASEWORK_MAX_STEPS_PER_RUN: STEPS_PER_RUN };
  // Its own database (in memory unless DATABASE_URL names one): the padding must not touch anyone's demo data.
  const stack = await startLocalStack(runConfig, { inMemoryDb: true });
  try {
    await padTracking(stack.db.admin);
    const log = new TranscriptLog(stack.db.admin, bodyCodecOf(codecFor(runConfig)));
    const tag = `history${Date.now().toString(36)}`;
    const samples: HistorySample[] = [];
    const failures: string[] = [];
    for (const steps of lengths) {
      const event = exampleEvent('dana-5102', `${tag}-${steps}`, { message: `Scripted long investigation of order ${ORDER}. #drill:${steps}` });
      // A run that cannot finish (at length, on a busy machine) is a row saying so, not the end of the bench.
      const status = await deliverAndWait(stack.client, stack.db.app, event, {
        taskQueue: runConfig.TEMPORAL_TASK_QUEUE,
        settings: investigationSettings(runConfig),
        timeoutMs: options.timeoutMs ?? 900_000,
      }).catch((error: Error) => {
        failures.push(`${steps} steps: ${error.message}`);
        return undefined;
      });
      if (!status) continue;
      const runs = await historySizes(stack.client, status.workflowId);
      if (options.breakdown) {
        printBreakdown(
          await historyBreakdown(
            stack.client,
            status.workflowId,
            runs.map((r) => r.runId),
          ),
          status.step,
          options.out,
        );
      }
      const entries = await log.all(status.workflowId, ['message']);
      const checked = await checkResults(stack.db.app, entries, status.workflowId);
      samples.push({
        steps: status.step,
        runs: runs.length,
        historyBytes: runs.reduce((n, r) => n + r.bytes, 0),
        events: runs.reduce((n, r) => n + r.events, 0),
        carriedBytes: await carriedSizes(
          stack.client,
          status.workflowId,
          runs.map((r) => r.runId),
        ),
        postgresBytes: await postgresBytes(stack.db.admin, status.workflowId),
        transcriptBytes: entries.reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e.body)), 0),
        resultsChecked: checked.checked,
        resultsMatched: checked.matched,
        meanResultTokens: checked.meanTokens,
      });
    }
    if (options.json) options.out(JSON.stringify(samples, null, 2));
    else printTable(samples, options.out, stack.model.label);
    for (const failure of failures) options.out(`  did not finish: ${failure}`);
    return samples;
  } finally {
    await stack.stop();
  }
}

function printTable(samples: HistorySample[], out: Out, model: string): void {
  const n = (value: number, digits = 0) => value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  out(`History by reference: a scripted investigation (${model}), tracking pages padded to ~4,000 tokens, continue-as-new every ${STEPS_PER_RUN} steps`);
  out('  steps  runs  history B/step  events/100 steps  carried state B  Postgres B      transcript B   PG/transcript  results word for word');
  for (const s of samples) {
    const ratio = s.transcriptBytes ? `${(s.postgresBytes / s.transcriptBytes).toFixed(2)}×` : '—';
    const results = `${s.resultsMatched}/${s.resultsChecked} (${n(s.meanResultTokens)} tok avg)`;
    out(
      `  ${String(s.steps).padStart(5)}  ${String(s.runs).padStart(4)}  ${n(s.historyBytes / s.steps).padStart(14)}  ${n((s.events / s.steps) * 100).padStart(16)}  ${n(s.carriedBytes).padStart(15)}  ${n(s.postgresBytes).padStart(13)}  ${n(s.transcriptBytes).padStart(13)}  ${ratio.padStart(13)}  ${results}`,
    );
  }
  out('  targets: history ≤ 4,096 B/step, ≤ 1,000 events/100 steps, carried state ≤ 65,536 B, Postgres ≤ 2× the transcript');
  for (const s of samples) {
    const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
    out(
      `  ${String(s.steps).padStart(5)} steps: history ${met(s.historyBytes / s.steps <= 4_096)}, events ${met((s.events / s.steps) * 100 <= 1_000)}, ` +
        `carried state ${met(s.carriedBytes <= 65_536)}, Postgres ${met(s.postgresBytes <= 2 * s.transcriptBytes)}, ` +
        `results ${met(s.resultsMatched === s.resultsChecked)}`,
    );
  }
}
