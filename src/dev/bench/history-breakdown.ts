import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { decodeHistoryPayloads } from '../../temporal/history-payloads';

type Out = (line: string) => void;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Payloads = temporal.api.common.v1.IPayloads | null | undefined;

// Where one investigation's history bytes and events go: each event's encoded size by event
// type, and each payload's encoded size by what it carries (which activity's input or result,
// markers, search attributes, memo, signals). The step plan's own fields are measured as JSON
// after decoding, so the table says which part of the plan is worth shrinking.

/** One row: how many, and how many bytes. */
export interface BreakdownRow {
  key: string;
  count: number;
  bytes: number;
}

/** The breakdown of one investigation's history (every run). */
export interface HistoryBreakdown {
  byEventType: BreakdownRow[];
  byPayload: BreakdownRow[];
  /** JSON bytes of each field of the step plans (callModelOnPlan inputs), decoded. */
  planFields: BreakdownRow[];
  totalBytes: number;
  totalEvents: number;
}

const EVENT_NAMES = temporal.api.enums.v1.EventType as unknown as Record<number, string>;

const eventName = (event: HistoryEvent) => (EVENT_NAMES[Number(event.eventType)] ?? String(event.eventType)).replace(/^EVENT_TYPE_/, '').toLowerCase();

const eventBytes = (event: HistoryEvent) => temporal.api.history.v1.HistoryEvent.encode(event).finish().length;

const payloadsBytes = (payloads: Payloads) => (payloads ? temporal.api.common.v1.Payloads.encode(payloads).finish().length : 0);

function add(rows: Map<string, BreakdownRow>, key: string, bytes: number, count = 1): void {
  const row = rows.get(key) ?? { key, count: 0, bytes: 0 };
  row.count += count;
  row.bytes += bytes;
  rows.set(key, row);
}

const sorted = (rows: Map<string, BreakdownRow>) => [...rows.values()].sort((a, b) => b.bytes - a.bytes);

/** Tabulates every run of `workflowId`: events by type, payloads by what they carry, and the step plans' fields. */
export async function historyBreakdown(client: Client, workflowId: string, runIds: readonly string[]): Promise<HistoryBreakdown> {
  const byType = new Map<string, BreakdownRow>();
  const byPayload = new Map<string, BreakdownRow>();
  const planFields = new Map<string, BreakdownRow>();
  let totalBytes = 0;
  let totalEvents = 0;
  for (const runId of runIds) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const scheduled = new Map<string, string>();
    for (const event of history.events ?? []) {
      const bytes = eventBytes(event);
      totalBytes += bytes;
      totalEvents += 1;
      add(byType, eventName(event), bytes);
      const sch = event.activityTaskScheduledEventAttributes;
      if (sch) {
        const name = sch.activityType?.name ?? '?';
        scheduled.set(String(event.eventId), name);
        add(byPayload, `${name} input`, payloadsBytes(sch.input));
        if (name === 'callModelOnPlan') {
          const [plan] = (await decodeHistoryPayloads(client.options.loadedDataConverter, sch.input?.payloads)) as Record<string, unknown>[];
          for (const [field, value] of Object.entries(plan ?? {})) add(planFields, field, Buffer.byteLength(JSON.stringify(value)));
        }
      }
      const done = event.activityTaskCompletedEventAttributes;
      if (done) add(byPayload, `${scheduled.get(String(done.scheduledEventId)) ?? '?'} result`, payloadsBytes(done.result));
      const marker = event.markerRecordedEventAttributes;
      if (marker) {
        const details = Object.values(marker.details ?? {}).reduce((n, p) => n + payloadsBytes(p), 0);
        add(byPayload, `marker ${marker.markerName ?? '?'} details`, details);
      }
      const upsert = event.upsertWorkflowSearchAttributesEventAttributes;
      if (upsert) add(byPayload, 'search attribute upsert', temporal.api.common.v1.SearchAttributes.encode(upsert.searchAttributes ?? {}).finish().length);
      const memo = event.workflowPropertiesModifiedEventAttributes;
      if (memo) add(byPayload, 'memo upsert', temporal.api.common.v1.Memo.encode(memo.upsertedMemo ?? {}).finish().length);
      const signal = event.workflowExecutionSignaledEventAttributes;
      if (signal) add(byPayload, `signal ${signal.signalName ?? '?'}`, payloadsBytes(signal.input));
      const started = event.workflowExecutionStartedEventAttributes;
      if (started) add(byPayload, 'run input (carried state)', payloadsBytes(started.input));
      const can = event.workflowExecutionContinuedAsNewEventAttributes;
      if (can) add(byPayload, 'continue-as-new input', payloadsBytes(can.input));
      const update = event.workflowExecutionUpdateAcceptedEventAttributes;
      if (update) add(byPayload, `update ${update.acceptedRequest?.input?.name ?? '?'}`, payloadsBytes(update.acceptedRequest?.input?.args));
    }
  }
  return { byEventType: sorted(byType), byPayload: sorted(byPayload), planFields: sorted(planFields), totalBytes, totalEvents };
}

/** Prints a breakdown per step (of `steps` steps). */
export function printBreakdown(breakdown: HistoryBreakdown, steps: number, out: Out): void {
  const n = (value: number, digits = 0) => value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  const table = (title: string, rows: BreakdownRow[], total: number) => {
    out(`  ${title}`);
    out(`    ${'what'.padEnd(44)}  ${'count'.padStart(7)}  ${'per step'.padStart(8)}  ${'bytes'.padStart(11)}  ${'B/step'.padStart(8)}  ${'share'.padStart(6)}`);
    for (const r of rows) {
      out(
        `    ${r.key.padEnd(44)}  ${String(r.count).padStart(7)}  ${n(r.count / steps, 2).padStart(8)}  ${n(r.bytes).padStart(11)}  ${n(r.bytes / steps).padStart(8)}  ${`${((100 * r.bytes) / (total || 1)).toFixed(1)}%`.padStart(6)}`,
      );
    }
  };
  out(`History breakdown over ${steps} steps: ${n(breakdown.totalEvents)} events, ${n(breakdown.totalBytes)} B (events encoded; the server's own count adds a little)`);
  table('by event type', breakdown.byEventType, breakdown.totalBytes);
  table('payloads by what they carry (encoded, encrypted)', breakdown.byPayload, breakdown.totalBytes);
  const planTotal = breakdown.planFields.reduce((s, r) => s + r.bytes, 0);
  table('step plan fields (JSON before encryption)', breakdown.planFields, planTotal);
}
