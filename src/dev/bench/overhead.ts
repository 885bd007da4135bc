import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { createActivities, type Activities } from '../../activities';
import { applyNotesUpdate, renderNotes, type NotesUpdate } from '../../context/agent-notes';
import { appendAssistant, assistantMessage, planReply } from '../../context/replies';
import { customerText, toolResultMessage } from '../../context/transcript';
import type { Config } from '../../config';
import { deliverAndWait } from '../../client/investigations';
import type { ToolCall } from '../../schemas/tool-call';
import { isToolName } from '../../schemas/tool-specs';
import { investigationSettings } from '../../settings';
import { buildRequest, clearIfDue, compactionSplit } from '../../workflows/context-step';
import { startingState, type Run } from '../../workflows/state';
import { exampleEvent } from '../demo/run';
import { startLocalStack, type LocalStack } from '../env/stack';
import { startTracing } from '../../observability/tracing';
import { startInProcessWorker, writeWorkflowBundle } from '../../worker';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { median } from './stats';
import { loadavg } from 'node:os';
import type { temporal } from '@temporalio/proto';
import { historySizes } from './workflow';
import { LOCAL_ACTIVITY_MARKER } from '../../temporal/history-payloads';

type Out = (line: string) => void;

/** Where a run's time went, from its history's event times (summed over the run), and its workflow tasks. */
export interface OverheadParts {
  /** Workflow tasks the run took. */
  workflowTasks: number;
  /** Workflow tasks waiting for the worker: scheduled → started. */
  taskQueueMs: number;
  /** Workflow tasks running on the worker (replaying, deciding, local activities, payload codec): started → completed. */
  taskRunMs: number;
  /** Remote activities waiting to be dispatched: scheduled → started (eager dispatch takes the poll out). */
  activityDispatchMs: number;
  /** Remote activities running (the model call, its transcript log reads and writes, the payload codec): started → completed. */
  activityRunMs: number;
  /** Local activities (markers) the run recorded. */
  localActivities: number;
}

/** One measured investigation: how many model steps it took, how long, and (through the worker) its history. */
export interface OverheadSample {
  steps: number;
  ms: number;
  events?: number;
  bytes?: number;
  parts?: OverheadParts;
}

/** One way through the worker, summarised: medians over the repeats. */
export interface WorkerSummary {
  msPerStep: number;
  stepsPerSecond: number;
  /** Milliseconds per step on top of the floor's. */
  overheadMsPerStep: number;
  /** This way's time per step over the floor's. */
  ratio: number;
  eventsPerStep: number;
  historyBytes: number;
  /** The parts per step (medians over the repeats). */
  parts: { workflowTasks: number; taskQueueMs: number; taskRunMs: number; activityDispatchMs: number; activityRunMs: number; localActivities: number };
}

/** The ways through the worker the bench runs, in the order it prints them. */
export const OVERHEAD_WAYS = {
  before: 'remote model calls, no eager dispatch (before)',
  eager: 'remote model calls, eager dispatch',
  local: 'eager, local model calls (after: the default)',
  traced: 'same as after, tracing on',
  absent: 'same as after, tracing absent from the bundle',
} as const;
export type OverheadWay = keyof typeof OVERHEAD_WAYS;

/** What `casework bench overhead` prints, and returns for --json. */
export interface OverheadResult {
  steps: number;
  repeats: number;
  floor: OverheadSample[];
  /** Through the worker, per way (OVERHEAD_WAYS). */
  ways: Record<OverheadWay, OverheadSample[]>;
  /** Spans the traced runs exported. */
  spansExported: number;
  summary: { floorMsPerStep: number; floorStepsPerSecond: number } & Record<OverheadWay, WorkerSummary>;
}

const drillMessage = (steps: number) => `Scripted long investigation of order 5102. #drill:${steps}`;

/**
 * The floor: the same investigation as a plain loop in this process — the same context kernel
 * (clearing, compaction, request building), the same model and the same tool activities on the
 * same Postgres — with no Temporal in between. What the worker adds on top of this is the
 * orchestration overhead: scheduling, history, workflow tasks and their round trips.
 */
export async function runFloor(activities: Activities, config: Config, ticketId: string, customerId: string, message: string): Promise<OverheadSample> {
  const settings = investigationSettings(config);
  const started = performance.now();
  const s = startingState({ ticketId, customerId, settings });
  const id = { workflowId: `floor-${ticketId}`, ticketId, customerId };
  // The clearing batch needs only the state and the settings; compaction runs below, on the floor's whole messages.
  const run = { id, s, settings } as unknown as Run;
  s.memoryBlock = (await activities.loadMemory({ customerId, now: new Date().toISOString(), message })).block;
  s.transcript.push({ role: 'user', content: [customerText(message)] });
  for (;;) {
    if (s.step >= settings.maxSteps) break;
    s.step += 1;
    clearIfDue(run);
    const split = compactionSplit(s, settings);
    if (split !== null) {
      s.caseNotes = (await activities.compactConversation({ messages: s.transcript.slice(0, split), previous: s.caseNotes })).notes;
      s.transcript = s.transcript.slice(split);
      s.notesShown = s.agentNotes;
    }
    s.shrinkContext = false;
    const reply = await activities.callModel({ purpose: 'investigate', ...buildRequest(s), max_tokens: settings.maxTokens });
    s.lastModelCallAt = Date.now();
    const said = assistantMessage(reply);
    if (said) appendAssistant(s.transcript, said);
    const plan = planReply(reply);
    if (plan.kind !== 'run_tools') break;
    const results: ToolResultBlockParam[] = [];
    for (const use of plan.uses) {
      if (use.name === 'write_notes' || use.name === 'read_notes') {
        if (use.name === 'write_notes') s.agentNotes = applyNotesUpdate(s.agentNotes, use.input as NotesUpdate);
        results.push({ type: 'tool_result', tool_use_id: use.id, content: renderNotes(s.agentNotes) });
        continue;
      }
      const name = use.name;
      if (!isToolName(name) || name === 'request_refund' || name === 'write_notes' || name === 'read_notes')
        throw new Error(`the overhead drill called ${name}, which the floor does not run`);
      const call: ToolCall = { name, input: use.input, context: { ...id, toolUseId: use.id } };
      const outcome = await activities[name](call);
      results.push({ type: 'tool_result', tool_use_id: use.id, content: outcome.content, ...(outcome.is_error ? { is_error: true } : {}) });
    }
    s.transcript.push(toolResultMessage(results, []));
  }
  return { steps: s.step, ms: performance.now() - started };
}

/** How a way's runs start: the worker (its task queue, and whether it asks for eager dispatch) and the runs' settings. */
interface WayRunner {
  client: LocalStack['client'];
  config: Config;
  localModelCalls: boolean;
}

const eventMs = (e: temporal.api.history.v1.IHistoryEvent) => Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;

/** The parts of a run's time, paired by the scheduled event each started and completed event names. */
export function partsOf(events: readonly temporal.api.history.v1.IHistoryEvent[]): OverheadParts {
  const at = new Map(events.map((e) => [String(e.eventId), eventMs(e)]));
  const since = (id: unknown, e: temporal.api.history.v1.IHistoryEvent) => eventMs(e) - (at.get(String(id)) ?? eventMs(e));
  const parts: OverheadParts = { workflowTasks: 0, taskQueueMs: 0, taskRunMs: 0, activityDispatchMs: 0, activityRunMs: 0, localActivities: 0 };
  for (const e of events) {
    if (e.workflowTaskStartedEventAttributes) {
      parts.workflowTasks += 1;
      parts.taskQueueMs += since(e.workflowTaskStartedEventAttributes.scheduledEventId, e);
    }
    if (e.workflowTaskCompletedEventAttributes) parts.taskRunMs += since(e.workflowTaskCompletedEventAttributes.startedEventId, e);
    if (e.activityTaskStartedEventAttributes) parts.activityDispatchMs += since(e.activityTaskStartedEventAttributes.scheduledEventId, e);
    if (e.activityTaskCompletedEventAttributes) parts.activityRunMs += since(e.activityTaskCompletedEventAttributes.startedEventId, e);
    if (e.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER) parts.localActivities += 1;
  }
  return parts;
}

async function runThroughWorker(way: WayRunner, db: LocalStack['db'], tag: string, steps: number): Promise<OverheadSample> {
  const event = exampleEvent('dana-5102', tag, { message: drillMessage(steps) });
  // Each way says how its model calls run, whatever the configuration's default.
  const { localModelCalls: _default, ...configured } = investigationSettings(way.config);
  const settings = { ...configured, ...(way.localModelCalls ? { localModelCalls: true as const } : {}) };
  const status = await deliverAndWait(way.client, db.app, event, { taskQueue: way.config.TEMPORAL_TASK_QUEUE, settings, timeoutMs: 600_000 });
  // Timed by the server's own clock, from the run's first event to its last (the workflow task that
  // published the reply), so the client's polling for the answer is not counted.
  const history = await way.client.workflow.getHandle(status.workflowId).fetchHistory();
  const events = history.events ?? [];
  const ms = eventMs(events[events.length - 1] ?? {}) - eventMs(events[0] ?? {});
  const runs = await historySizes(way.client, status.workflowId);
  return { steps: status.step, ms, events: runs.reduce((n, r) => n + r.events, 0), bytes: runs.reduce((n, r) => n + r.bytes, 0), parts: partsOf(events) };
}

/** A span exporter that only counts: what tracing costs casework, without a collector's. */
function countingExporter(): SpanExporter & { count: number } {
  const exporter = {
    count: 0,
    export(spans: unknown[], done: (result: { code: number }) => void) {
      exporter.count += spans.length;
      done({ code: 0 });
    },
    shutdown: () => Promise.resolve(),
  };
  return exporter;
}

/**
 * `casework bench overhead`: a scripted investigation of `steps` model calls (the offline
 * model's drill: a tracking page per step, a note every fifth) run `repeats` times each way,
 * alternating, in one process on one machine: as the plain loop above, and through in-process
 * workers on the dev server four ways — as runs started before this round (remote model calls,
 * a worker that asks for no eager dispatch), with eager dispatch, with eager dispatch and the
 * model calls local (CASEWORK_LOCAL_MODEL_CALLS), and that last on a worker and client made
 * with tracing on. Prints, for each, steps per second, milliseconds per step over the floor,
 * the ratio to the floor and the history's events per step, and where the time went.
 */
export async function runOverheadBench(config: Config, options: { out: Out; steps?: number; repeats?: number; json?: boolean }): Promise<OverheadResult> {
  const steps = options.steps ?? 30;
  const repeats = options.repeats ?? 3;
  const runConfig = { ...config, CASEWORK_MAX_STEPS: steps + 10, CASEWORK_MAX_STEPS_PER_RUN: steps + 10, CASEWORK_EAGER_ACTIVITIES: 'true' as const };
  const stack = await startLocalStack(runConfig, { inMemoryDb: !config.DATABASE_URL });
  const stops: (() => Promise<unknown>)[] = [];
  try {
    const activities = createActivities({ pool: stack.db.app, model: stack.model, noteTtlMonths: config.CASEWORK_NOTE_TTL_MONTHS });
    const tag = `overhead${Date.now().toString(36)}`;
    const customerId = exampleEvent('dana-5102', tag).customerId;
    // The before way polls a task queue of its own, on a worker that asks for no eager dispatch.
    const beforeConfig = { ...runConfig, TEMPORAL_TASK_QUEUE: `${runConfig.TEMPORAL_TASK_QUEUE}-before`, CASEWORK_EAGER_ACTIVITIES: 'false' as const };
    const before = await startInProcessWorker({ config: beforeConfig, pool: stack.db.app, model: stack.model });
    stops.push(() => before.stop());
    // The absent way runs a bundle built without the tracing interceptor module: what tracing off is measured against.
    const bundleDir = await mkdtemp(join(tmpdir(), 'casework-overhead-'));
    stops.push(() => rm(bundleDir, { recursive: true, force: true }));
    await writeWorkflowBundle(join(bundleDir, 'untraced-bundle.js'), { withoutTracing: true });
    const absentConfig = { ...runConfig, TEMPORAL_TASK_QUEUE: `${runConfig.TEMPORAL_TASK_QUEUE}-absent` };
    const absent = await startInProcessWorker({ config: absentConfig, pool: stack.db.app, model: stack.model, workflowBundlePath: join(bundleDir, 'untraced-bundle.js') });
    stops.push(() => absent.stop());
    // Tracing starts after the untraced workers and clients were made, so they stay untraced (each
    // decides when it is made); the traced pair polls a task queue of its own.
    const exporter = countingExporter();
    const tracing = startTracing(runConfig, { serviceName: 'casework-bench', exporter });
    stops.push(async () => tracing?.shutdown());
    const tracedConfig = { ...runConfig, TEMPORAL_TASK_QUEUE: `${runConfig.TEMPORAL_TASK_QUEUE}-traced` };
    const traced = await startInProcessWorker({ config: tracedConfig, pool: stack.db.app, model: stack.model });
    stops.push(() => traced.stop());
    const runners: Record<OverheadWay, WayRunner> = {
      before: { client: before.client, config: beforeConfig, localModelCalls: false },
      eager: { client: stack.client, config: runConfig, localModelCalls: false },
      local: { client: stack.client, config: runConfig, localModelCalls: true },
      traced: { client: traced.client, config: tracedConfig, localModelCalls: true },
      absent: { client: absent.client, config: absentConfig, localModelCalls: true },
    };
    const wayNames = Object.keys(OVERHEAD_WAYS) as OverheadWay[];
    // One of each first, unmeasured: JIT, the dev server's first workflow task, connection pools.
    await runFloor(activities, runConfig, `${tag}-warm`, customerId, drillMessage(steps));
    for (const way of wayNames) await runThroughWorker(runners[way], stack.db, `${tag}-warm${way}`, steps);
    const floor: OverheadSample[] = [];
    const ways = Object.fromEntries(wayNames.map((w) => [w, [] as OverheadSample[]])) as Record<OverheadWay, OverheadSample[]>;
    for (let i = 0; i < repeats; i++) {
      floor.push(await runFloor(activities, runConfig, `${tag}-f${i}`, customerId, drillMessage(steps)));
      for (const way of wayNames) ways[way].push(await runThroughWorker(runners[way], stack.db, `${tag}-${way}${i}`, steps));
    }
    return report({ steps, repeats, floor, ways, spansExported: exporter.count }, stack.model.label, options);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await stack.stop();
  }
}

/** Summarises the samples, and prints them as a table (or JSON). */
function report(
  samples: Pick<OverheadResult, 'steps' | 'repeats' | 'floor' | 'ways' | 'spansExported'>,
  modelLabel: string,
  options: { out: Out; json?: boolean },
): OverheadResult {
  const { steps, repeats, floor, ways } = samples;
  const perStep = (of: OverheadSample[]) => median(of.map((x) => x.ms / x.steps));
  const floorMsPerStep = perStep(floor);
  const partPerStep = (of: OverheadSample[], key: keyof OverheadParts) => median(of.map((x) => (x.parts?.[key] ?? 0) / x.steps));
  const summarise = (of: OverheadSample[]): WorkerSummary => {
    const msPerStep = perStep(of);
    return {
      msPerStep,
      stepsPerSecond: 1000 / msPerStep,
      overheadMsPerStep: msPerStep - floorMsPerStep,
      ratio: msPerStep / floorMsPerStep,
      eventsPerStep: median(of.map((x) => (x.events ?? 0) / x.steps)),
      historyBytes: median(of.map((x) => x.bytes ?? 0)),
      parts: {
        workflowTasks: partPerStep(of, 'workflowTasks'),
        taskQueueMs: partPerStep(of, 'taskQueueMs'),
        taskRunMs: partPerStep(of, 'taskRunMs'),
        activityDispatchMs: partPerStep(of, 'activityDispatchMs'),
        activityRunMs: partPerStep(of, 'activityRunMs'),
        localActivities: partPerStep(of, 'localActivities'),
      },
    };
  };
  const wayNames = Object.keys(OVERHEAD_WAYS) as OverheadWay[];
  const summary = {
    floorMsPerStep,
    floorStepsPerSecond: 1000 / floorMsPerStep,
    ...(Object.fromEntries(wayNames.map((w) => [w, summarise(ways[w])])) as Record<OverheadWay, WorkerSummary>),
  };
  const result: OverheadResult = { ...samples, summary };
  if (options.json) {
    options.out(JSON.stringify(result, null, 2));
    return result;
  }
  const out = options.out;
  out(`Orchestration overhead: a ${steps}-step scripted investigation (${modelLabel}), ${repeats} runs each way, alternating, medians; load average ${loadavg()[0]!.toFixed(2)}:`);
  out('  way                                               steps/s   ms/step   over floor   × floor   events/step   history bytes');
  const row = (name: string, stepsPerSecond: number, msPerStep: number, over: string, ratio: string, events: string, bytes: string) =>
    out(
      `  ${name.padEnd(48)}  ${stepsPerSecond.toFixed(1).padStart(7)}  ${msPerStep.toFixed(1).padStart(8)}  ${over.padStart(11)}  ${ratio.padStart(8)}  ${events.padStart(12)}  ${bytes.padStart(14)}`,
    );
  row('plain loop (floor)', summary.floorStepsPerSecond, floorMsPerStep, '—', '1.00×', '—', '—');
  for (const w of wayNames) {
    const s = summary[w];
    row(
      OVERHEAD_WAYS[w],
      s.stepsPerSecond,
      s.msPerStep,
      `+${s.overheadMsPerStep.toFixed(1)} ms`,
      `${s.ratio.toFixed(2)}×`,
      s.eventsPerStep.toFixed(1),
      s.historyBytes.toLocaleString('en-US'),
    );
  }
  out('');
  out("  where a step's time went (per step, from the history's event times):");
  out('  way                                               workflow tasks   task queued   task running   activity dispatch   activity running   local activities');
  for (const w of wayNames) {
    const p = summary[w].parts;
    const ms = (v: number) => `${v.toFixed(1)} ms`;
    out(
      `  ${OVERHEAD_WAYS[w].padEnd(48)}  ${p.workflowTasks.toFixed(2).padStart(14)}  ${ms(p.taskQueueMs).padStart(12)}  ${ms(p.taskRunMs).padStart(13)}  ${ms(p.activityDispatchMs).padStart(18)}  ${ms(p.activityRunMs).padStart(17)}  ${p.localActivities.toFixed(2).padStart(17)}`,
    );
  }
  out('  task running holds the workflow code, the payload codec of what the task reads and writes, and local activities (with their transcript log writes);');
  out('  activity running holds the model call, its transcript log reads and writes, and its payloads; the rest of a step is the server between events.');
  const tracedMs = summary.traced.msPerStep - summary.local.msPerStep;
  const offMs = summary.local.msPerStep - summary.absent.msPerStep;
  out(
    `  tracing on adds ${tracedMs.toFixed(1)} ms per step (${samples.spansExported.toLocaleString('en-US')} spans exported); off, runs carry no trace header and the worker adds no interceptor.`,
  );
  out(`  tracing off against tracing absent from the bundle: ${offMs >= 0 ? '+' : ''}${offMs.toFixed(1)} ms per step.`);
  return result;
}
