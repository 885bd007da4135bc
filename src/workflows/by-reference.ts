import type { CacheHints } from '../context/cache-breakpoints';
import type { MessageParam, ToolResultBlockParam, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import { appendAssistant } from '../context/replies';
import { encodeLayout, encodeSeqs } from '../context/plan-encoding';
import { layoutOf, leanBlock, numberBlocks, versionOf, type LeanBlock } from '../context/references';
import type { CaseNotes } from '../schemas/case-notes';
import type { CarriedState, StepRecord } from '../schemas/investigation';
import type { CompactionPlan, ContextRefs, LoggedOutcome, LogEntry, LogKind, StepPlan, TranscriptLogState } from '../schemas/transcript-log';
import type { Run } from './state';

// History by reference, the workflow's half: every transcript
// entry reaches the transcript log once — a tool's result written by its activity, the model's
// reply by the model activity, everything else as "new entries" of the next plan — and the
// workflow keeps only the live tail as a lean skeleton (src/context/references.ts). The model
// activity gets the step's plan, not the messages, so history grows by a few hundred bytes a
// step, and what compaction folds into case notes leaves the carried state for the log.

/** Step records kept in the carried state; older ones move to the log (kind `step`). */
export const STEP_RECORDS_KEPT = 50;

/** Numbers skipped after a model call that failed, so a reply it may have written is never overwritten. */
const SKIP_AFTER_FAILED_CALL = 64;

/**
 * The run's log state, started at the run's start (a fresh or recovered run starts one), numbering
 * from `from` when earlier runs of the workflow id wrote entries (InvestigationInput.logFrom).
 */
export function logState(s: CarriedState, from = 1): TranscriptLogState {
  if (s.log && s.log.nextSeq < from) s.log.nextSeq = from;
  if (!s.log) {
    s.log = { nextSeq: from, ...(from > 1 ? { firstSeq: from } : {}), pending: [], droppedMessages: 0, stepsLogged: 0, context: {} };
    // A recovered run's carried transcript is written once, numbered from here.
    numberTranscript(s);
  }
  return s.log;
}

/** Numbers the skeleton's new blocks; their whole bodies wait in `pending` for the next activity to write. */
export function numberTranscript(s: CarriedState): void {
  const log = s.log ?? logState(s);
  const numbered = numberBlocks(s.transcript, log.nextSeq);
  s.transcript = numbered.messages;
  log.pending.push(...numbered.entries);
  log.nextSeq = numbered.nextSeq;
}

/** The compacted prefix leaves the skeleton: the log keeps it, case notes summarise it. */
function dropPrefix(s: CarriedState, count: number): void {
  s.transcript = s.transcript.slice(count);
  logState(s).droppedMessages += count;
}

/** A new entry for the next activity to write. */
function queueEntry(s: CarriedState, kind: LogKind, body: unknown, tokens = 0): number {
  const log = logState(s);
  const seq = log.nextSeq++;
  log.pending.push({ seq, kind, body, tokens });
  return seq;
}

/** The entry holding the current version of a context block, written once per version. */
function contextRef(s: CarriedState, key: keyof ContextRefs, kind: LogKind, value: unknown, present: boolean): number | null {
  if (!present) return null;
  const log = logState(s);
  const version = versionOf(value);
  const known = log.context[key];
  if (known && known.version === version) return known.seq;
  const seq = queueEntry(s, kind, value);
  log.context[key] = { seq, version };
  return seq;
}

/** Takes the entries waiting to be written, for a plan; they stay queued until its activity succeeds. */
function pendingEntries(s: CarriedState): LogEntry[] {
  return [...logState(s).pending];
}

/** The entries a successful activity wrote leave the queue. */
export function written(s: CarriedState, entries: readonly LogEntry[]): void {
  const done = new Set(entries.map((e) => e.seq));
  const log = logState(s);
  log.pending = log.pending.filter((e) => !done.has(e.seq));
}

/** This step's plan: what to write, the live tail's layout, the cleared results, the context versions, where the reply goes. */
export function stepPlan(run: Run, options: { max_tokens: number; extra?: Record<string, unknown>; cache?: CacheHints }): StepPlan {
  const { s } = run;
  numberTranscript(s);
  const context: ContextRefs = {
    memory: contextRef(s, 'memory', 'memory', s.memoryBlock, Boolean(s.memoryBlock)),
    agentNotes: contextRef(s, 'agentNotes', 'agent_notes', s.notesShown, true),
    caseNotes: contextRef(s, 'caseNotes', 'case_notes', s.caseNotes, s.caseNotes !== null),
  };
  const common = {
    entries: pendingEntries(s),
    context,
    replySeq: logState(s).nextSeq,
    max_tokens: options.max_tokens,
    ...(options.extra ? { extra: options.extra } : {}),
    ...(options.cache ? { cache: options.cache } : {}),
  };
  return { v: 2, layout: encodeLayout(layoutOf(s.transcript)), cleared: encodeSeqs(clearedSeqs(s)), ...common };
}

/** The entries of the skeleton's tool results that clearing names, in order: the same results, by number. */
export function clearedSeqs(s: CarriedState): number[] {
  if (s.clearedIds.length === 0) return [];
  const cleared = new Set(s.clearedIds);
  const seqs: number[] = [];
  for (const message of s.transcript) {
    if (typeof message.content === 'string') continue;
    for (const block of message.content as LeanBlock[]) {
      if (block.type === 'tool_result' && cleared.has(block.tool_use_id) && block.seq !== undefined) seqs.push(block.seq);
    }
  }
  return seqs.sort((a, b) => a - b);
}

/** After the model call: the reply's blocks are numbered where the activity wrote them, and join the skeleton lean. */
export function appendLoggedReply(s: CarriedState, plan: StepPlan, message: MessageParam | null): void {
  written(s, plan.entries);
  const log = logState(s);
  if (!message || !Array.isArray(message.content)) return;
  const content = message.content.map((block, i) => leanBlock(block, plan.replySeq + i));
  log.nextSeq = plan.replySeq + content.length;
  appendAssistant(s.transcript, { role: 'assistant', content });
}

/** After a model call that failed: numbers its reply may have used are never given out again. */
export function skipAfterFailedCall(s: CarriedState, plan: StepPlan): void {
  logState(s).nextSeq = Math.max(logState(s).nextSeq, plan.replySeq + SKIP_AFTER_FAILED_CALL);
}

/** The number a tool's result is written at, reserved before the tool runs. */
export function reserveResult(s: CarriedState): number {
  return logState(s).nextSeq++;
}

/**
 * The tool_result for the skeleton: the lean block of a result the tool activity wrote itself,
 * or the whole result (notes, refusals, failures) to be numbered and written with the next plan.
 */
export function resultBlock(use: ToolUseBlock, outcome: { content: string; is_error: boolean } & Partial<LoggedOutcome>, seq: number): ToolResultBlockParam {
  const base: ToolResultBlockParam = { type: 'tool_result', tool_use_id: use.id, content: outcome.content, ...(outcome.is_error ? { is_error: true } : {}) };
  if (outcome.logged?.seq !== seq) return base;
  return { ...base, seq, tokens: outcome.logged.tokens } as ToolResultBlockParam;
}

/** The plan for compacting the first `split` messages of the skeleton. */
export function compactionPlan(run: Run, split: number): CompactionPlan {
  const { s } = run;
  numberTranscript(s);
  const layout = layoutOf(s.transcript.slice(0, split));
  // The previous notes travel by entry when the log holds this very version (written, or queued in these entries).
  const known = logState(s).context.caseNotes;
  const byEntry = s.caseNotes === null || (known !== undefined && known.version === versionOf(s.caseNotes));
  return {
    v: 2,
    entries: pendingEntries(s),
    layout: encodeLayout(layout),
    previousSeq: s.caseNotes === null || !byEntry ? null : known!.seq,
    ...(byEntry ? {} : { previous: s.caseNotes }),
    notesSeq: reserveResult(s),
  };
}

/** After compaction: the plan's entries are written, and the compacted messages leave the skeleton. */
export function compacted(s: CarriedState, plan: CompactionPlan, split: number): void {
  written(s, plan.entries);
  dropPrefix(s, split);
}

/** The notes a compact plan's activity wrote at `notesSeq` are the current version: the next plan names them instead of sending them again. */
export function notesLogged(s: CarriedState, plan: CompactionPlan, notes: CaseNotes): void {
  logState(s).context.caseNotes = { seq: plan.notesSeq, version: versionOf(notes) };
}

/** Records a step; past STEP_RECORDS_KEPT the oldest records move to the log, so the carried state stays bounded. */
export function recordStepByReference(s: CarriedState, record: StepRecord): void {
  s.steps.push(record);
  const over = s.steps.length - STEP_RECORDS_KEPT;
  if (over <= 0) return;
  for (const old of s.steps.splice(0, over)) queueEntry(s, 'step', old);
  logState(s).stepsLogged += over;
}

/** Everything the next run needs, with the skeleton numbered so no large body is carried. */
export function carriedByReference(s: CarriedState): CarriedState {
  numberTranscript(s);
  return s;
}
