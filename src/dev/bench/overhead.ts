import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
import { buildRequest, prepareContext } from '../../workflows/context-step';
import { startingState, type Run } from '../../workflows/state';
import { exampleEvent } from '../demo/run';
import { startLocalStack, type LocalStack } from '../env/stack';
import { startTracing } from '../../observability/tracing';
import { startInProcessWorker, writeWorkflowBundle } from '../../worker';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { median } from './stats';
import { historySizes } from './workflow';

type Out = (line: string) => void;

/** One measured investigation: how many model steps it took, how long, and (through the worker) its history. */
export interface OverheadSample {
  steps: number;
  ms: number;
  events?: number;
  bytes?: number;
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
}

/** What `casework bench overhead` prints, and returns for --json. */
export interface OverheadResult {
  steps: number;
  repeats: number;
  floor: OverheadSample[];
  /** Through the worker with every tool a remote activity, one at a time: runs started with CASEWORK_LOCAL_READ_TOOLS=false, as before patch local-read-tools. */
  workerRemoteTools: OverheadSample[];
  /** Through the worker as runs start today: read-only tools local, one reply's reads side by side. */
  worker: OverheadSample[];
  /** As `worker`, on a worker and client made with tracing on (every span exported, one at a time, to a counting exporter). */
  workerTraced: OverheadSample[];
  /** As `worker`, on a worker whose workflow bundle has no tracing interceptor at all (casework before tracing). */
  workerUntraceable: OverheadSample[];
  /** Spans the traced runs exported. */
  spansExported: number;
  summary: {
    floorMsPerStep: number;
    floorStepsPerSecond: number;
    remoteTools: WorkerSummary;
    localReadTools: WorkerSummary;
    traced: WorkerSummary;
    untraceable: WorkerSummary;
  };
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
  // prepareContext needs only the state, the settings and the compaction call.
  const run = { id, s, settings, acts: { compactConversation: activities.compactConversation } } as unknown as Run;
  s.memoryBlock = (await activities.loadMemory({ customerId, now: new Date().toISOString(), message })).block;
  s.transcript.push({ role: 'user', content: [customerText(message)] });
  for (;;) {
    if (s.step >= settings.maxSteps) break;
    s.step += 1;
    await prepareContext(run);
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

async function runThroughWorker(stack: Pick<LocalStack, 'client' | 'db'>, config: Config, tag: string, steps: number, localReadTools: boolean): Promise<OverheadSample> {
  const event = exampleEvent('dana-5102', tag, { message: drillMessage(steps) });
  const settings = investigationSettings({ ...config, CASEWORK_LOCAL_READ_TOOLS: localReadTools ? 'true' : 'false' });
  const status = await deliverAndWait(stack.client, stack.db.app, event, { taskQueue: config.TEMPORAL_TASK_QUEUE, settings, timeoutMs: 600_000 });
  // Timed by the server's own clock, from the run's first event to its last (the workflow task that
  // published the reply), so the client's polling for the answer is not counted.
  const history = await stack.client.workflow.getHandle(status.workflowId).fetchHistory();
  const times = (history.events ?? []).map((e) => Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6);
  const ms = (times[times.length - 1] ?? 0) - (times[0] ?? 0);
  const runs = await historySizes(stack.client, status.workflowId);
  return { steps: status.step, ms, events: runs.reduce((n, r) => n + r.events, 0), bytes: runs.reduce((n, r) => n + r.bytes, 0) };
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
 * alternating, in one process on one machine: as the plain loop above, and through an
 * in-process worker on the dev server three times — with every tool a remote activity (runs
 * started with CASEWORK_LOCAL_READ_TOOLS=false, as before patch local-read-tools), as runs
 * start today (read-only tools local, tracing off), and the same on a second worker and client
 * made with tracing on. Prints, for each, steps per second, milliseconds per step over the
 * floor, the ratio to the floor and the history's events per step.
 */
export async function runOverheadBench(config: Config, options: { out: Out; steps?: number; repeats?: number; json?: boolean }): Promise<OverheadResult> {
  const steps = options.steps ?? 30;
  const repeats = options.repeats ?? 3;
  const runConfig = { ...config, CASEWORK_MAX_STEPS: steps + 10, CASEWORK_MAX_STEPS_PER_RUN: steps + 10 };
  const stack = await startLocalStack(runConfig, { inMemoryDb: !config.DATABASE_URL });
  try {
    const activities = createActivities({ pool: stack.db.app, model: stack.model, noteTtlMonths: config.CASEWORK_NOTE_TTL_MONTHS });
    const tag = `overhead${Date.now().toString(36)}`;
    const customerId = exampleEvent('dana-5102', tag).customerId;
    // One of each first, unmeasured: JIT, the dev server's first workflow task, connection pools.
    await runFloor(activities, runConfig, `${tag}-warm`, customerId, drillMessage(steps));
    await runThroughWorker(stack, runConfig, `${tag}-warmr`, steps, false);
    await runThroughWorker(stack, runConfig, `${tag}-warml`, steps, true);
    // Tracing absent: a worker whose bundle lacks the tracing interceptor, on a task queue of its own.
    const absentBundle = join(tmpdir(), `casework-overhead-untraced-${process.pid}-${tag}.js`);
    await writeWorkflowBundle(absentBundle, { withoutTracing: true });
    const absentConfig = { ...runConfig, TEMPORAL_TASK_QUEUE: `${runConfig.TEMPORAL_TASK_QUEUE}-absent` };
    const absent = await startInProcessWorker({ config: absentConfig, pool: stack.db.app, model: stack.model, workflowBundlePath: absentBundle });
    await runThroughWorker({ client: absent.client, db: stack.db }, absentConfig, `${tag}-warma`, steps, true);
    // Tracing starts after the untraced worker and client were made, so they stay untraced (each
    // decides when it is made); the traced pair polls a task queue of its own.
    const exporter = countingExporter();
    const tracing = startTracing(runConfig, { serviceName: 'casework-bench', exporter });
    const tracedConfig = { ...runConfig, TEMPORAL_TASK_QUEUE: `${runConfig.TEMPORAL_TASK_QUEUE}-traced` };
    const traced = await startInProcessWorker({ config: tracedConfig, pool: stack.db.app, model: stack.model });
    try {
      await runThroughWorker({ client: traced.client, db: stack.db }, tracedConfig, `${tag}-warmt`, steps, true);
      const floor: OverheadSample[] = [];
      const workerRemoteTools: OverheadSample[] = [];
      const worker: OverheadSample[] = [];
      const workerTraced: OverheadSample[] = [];
      const workerUntraceable: OverheadSample[] = [];
      for (let i = 0; i < repeats; i++) {
        workerUntraceable.push(await runThroughWorker({ client: absent.client, db: stack.db }, absentConfig, `${tag}-a${i}`, steps, true));
        floor.push(await runFloor(activities, runConfig, `${tag}-f${i}`, customerId, drillMessage(steps)));
        workerRemoteTools.push(await runThroughWorker(stack, runConfig, `${tag}-r${i}`, steps, false));
        worker.push(await runThroughWorker(stack, runConfig, `${tag}-l${i}`, steps, true));
        workerTraced.push(await runThroughWorker({ client: traced.client, db: stack.db }, tracedConfig, `${tag}-t${i}`, steps, true));
      }
      return report({ steps, repeats, floor, workerRemoteTools, worker, workerTraced, workerUntraceable, spansExported: exporter.count }, stack.model.label, options);
    } finally {
      await traced.stop();
      await absent.stop();
      rmSync(absentBundle, { force: true });
      await tracing?.shutdown();
    }
  } finally {
    await stack.stop();
  }
}

/** Summarises the samples, and prints them as a table (or JSON). */
function report(
  samples: Pick<OverheadResult, 'steps' | 'repeats' | 'floor' | 'workerRemoteTools' | 'worker' | 'workerTraced' | 'workerUntraceable' | 'spansExported'>,
  modelLabel: string,
  options: { out: Out; json?: boolean },
): OverheadResult {
  const { steps, repeats, floor, workerRemoteTools, worker, workerTraced, workerUntraceable } = samples;
  const perStep = (of: OverheadSample[]) => median(of.map((x) => x.ms / x.steps));
  const floorMsPerStep = perStep(floor);
  const summarise = (of: OverheadSample[]): WorkerSummary => {
    const msPerStep = perStep(of);
    return {
      msPerStep,
      stepsPerSecond: 1000 / msPerStep,
      overheadMsPerStep: msPerStep - floorMsPerStep,
      ratio: msPerStep / floorMsPerStep,
      eventsPerStep: median(of.map((x) => (x.events ?? 0) / x.steps)),
      historyBytes: median(of.map((x) => x.bytes ?? 0)),
    };
  };
  const summary = {
    floorMsPerStep,
    floorStepsPerSecond: 1000 / floorMsPerStep,
    remoteTools: summarise(workerRemoteTools),
    localReadTools: summarise(worker),
    traced: summarise(workerTraced),
    untraceable: summarise(workerUntraceable),
  };
  const result: OverheadResult = { ...samples, summary };
  if (options.json) {
    options.out(JSON.stringify(result, null, 2));
    return result;
  }
  const out = options.out;
  out(`Orchestration overhead: a ${steps}-step scripted investigation (${modelLabel}), ${repeats} runs each way, alternating, medians:`);
  out('  way                                   steps/s   ms/step   over floor   × floor   events/step   history bytes');
  const row = (name: string, stepsPerSecond: number, msPerStep: number, over: string, ratio: string, events: string, bytes: string) =>
    out(
      `  ${name.padEnd(36)}  ${stepsPerSecond.toFixed(1).padStart(7)}  ${msPerStep.toFixed(1).padStart(8)}  ${over.padStart(11)}  ${ratio.padStart(8)}  ${events.padStart(12)}  ${bytes.padStart(14)}`,
    );
  row('plain loop (floor)', summary.floorStepsPerSecond, floorMsPerStep, '—', '1.00×', '—', '—');
  const workerRow = (name: string, w: WorkerSummary) =>
    row(name, w.stepsPerSecond, w.msPerStep, `+${w.overheadMsPerStep.toFixed(1)} ms`, `${w.ratio.toFixed(2)}×`, w.eventsPerStep.toFixed(1), w.historyBytes.toLocaleString('en-US'));
  workerRow('worker, every tool remote (before)', summary.remoteTools);
  workerRow('worker, read-only tools local (now)', summary.localReadTools);
  workerRow('same, tracing on', summary.traced);
  workerRow('same, tracing absent from the bundle', summary.untraceable);
  const cut = 1 - summary.localReadTools.overheadMsPerStep / summary.remoteTools.overheadMsPerStep;
  out(
    `  local read-only tools cut the overhead per step by ${(cut * 100).toFixed(0)}% and the events per step from ${summary.remoteTools.eventsPerStep.toFixed(1)} to ${summary.localReadTools.eventsPerStep.toFixed(1)}.`,
  );
  const tracedMs = summary.traced.msPerStep - summary.localReadTools.msPerStep;
  const offMs = summary.localReadTools.msPerStep - summary.untraceable.msPerStep;
  out(
    `  tracing on adds ${tracedMs.toFixed(1)} ms per step (${samples.spansExported.toLocaleString('en-US')} spans exported); off, runs carry no trace header and the worker adds no interceptor.`,
  );
  out(
    `  tracing off against absent: ${offMs >= 0 ? '+' : ''}${offMs.toFixed(1)} ms per step (${(summary.localReadTools.msPerStep / summary.untraceable.msPerStep).toFixed(2)}×), within the runs' own spread when it is near zero.`,
  );
  return result;
}
