import { ActivityFailure } from '@temporalio/workflow';
import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { costOf } from '../context/accounting';
import { contextManagementEdits } from '../context/clearing';
import { appendUserText, assistantMessage, EMPTY_REPLY_NUDGE, planReply } from '../context/replies';
import { toolResultMessage, toolUses } from '../context/transcript';
import { repairTranscript, requestProblems } from '../context/transcript-check';
import { addUsage, type ModelReply } from '../schemas/model';
import { buildRequest, prepareContext } from './context-step';
import { cacheHintsFor, strategyName } from './cache-schedule';
import { describeLeaks, publicReplyLeaks } from '../context/public-reply';
import { replyHeldNote } from './desk-notes';
import { queueNote, queueReply } from './desk-posts';
import { handOff, MODEL_DECLINED_REASON, REPLY_HELD_REASON } from './hand-off';
import { publish, type Run } from './state';
import { runTools } from './tool-dispatch';
import { isLocalActivityFailure } from './activities';
import { mcpPlanField } from './mcp-tools';
import { appendLoggedReply, recordStepByReference, reserveResult, resultBlock, skipAfterFailedCall, stepPlan } from './by-reference';
import type { StepPlan } from '../schemas/transcript-log';

// One step of the conversation: the model call on the lean context, and what its reply leads
// to (tools, a continuation, the end of the turn, a hand-over). The loop in investigation.ts
// decides when a step is due.

/** Empty replies in a row a turn tolerates before a person takes over. */
const MAX_EMPTY_REPLIES = 2;

/** Context events of one step, in the order they happened; undefined when none. */
const joinEvents = (...events: (string | null | undefined)[]) => events.filter((e): e is string => Boolean(e)).join('; ') || undefined;

/** Why an activity failed: the failure's own words, for operators (never the customer). A local activity's last attempt rejects with its own failure. */
export const failureText = (error: Error) =>
  error instanceof ActivityFailure ? (error.cause instanceof Error ? `${error.cause.name}: ${error.cause.message}` : error.message) : `${error.name}: ${error.message}`;

/** True for the failure a model call (remote, or local under settings.localModelCalls) rejects with once its retries are spent. */
export const isModelCallFailure = (run: Run, error: unknown): error is Error =>
  error instanceof ActivityFailure || (run.settings.localModelCalls === true && isLocalActivityFailure(error));

/** One model call on the lean context; the reply joins the transcript. Null when a person must take over. */
export async function modelStep(run: Run): Promise<ModelReply | null> {
  const { s, settings, acts } = run;
  s.step += 1;
  let plan: StepPlan | undefined;
  try {
    const contextEvent = await prepareContext(run);
    let built = buildRequest(s);
    if (requestProblems(built).length) {
      s.transcript = repairTranscript(s.transcript);
      built = buildRequest(s);
    }
    // Where the breakpoints go and for how long: the cache schedule's call, for runs that follow it.
    const cache = cacheHintsFor(run, { built, tail: s.transcript });
    if (cache) built = buildRequest(s, cache);
    const problems = requestProblems(built);
    if (problems.length) {
      handOff(run, 'transcript_invalid', `the conversation breaks the Messages API's rules and could not be repaired: ${problems.join('; ')}`);
      return null;
    }
    const extra = settings.thinking ? { thinking: { type: 'enabled', budget_tokens: 1024 }, context_management: contextManagementEdits(settings.keepRecent) } : undefined;
    // The activity is sent the step's plan and rebuilds these same messages from the transcript log.
    plan = { ...stepPlan(run, { max_tokens: settings.maxTokens, extra, ...(cache ? { cache } : {}) }), ...mcpPlanField(s) };
    const reply = await acts.callModelOnPlan(plan);
    s.lastModelCallAt = Date.now();
    s.cache = { strategy: strategyName(settings, run.cacheSchedule !== undefined), lastTtl: cache?.ttl ?? '5m' };
    s.model = reply.model;
    const cost = costOf(reply.usage, settings.prices);
    s.totals = addUsage(s.totals, reply.usage);
    s.costUsd += cost;
    // The reply's blocks take their numbers first: anything queued after them (a step record) follows.
    appendLoggedReply(s, plan, assistantMessage(reply));
    const record = {
      step: s.step,
      tools: toolUses(reply.content).map((u) => u.name),
      usage: reply.usage,
      cost_usd: cost,
      context_event: joinEvents(s.contextEventDue, contextEvent, cache?.ttl === '1h' ? 'cached for an hour before a wait on a person' : undefined),
    };
    recordStepByReference(s, record);
    s.contextEventDue = null;
    return reply;
  } catch (error) {
    if (!isModelCallFailure(run, error)) throw error;
    if (plan) skipAfterFailedCall(s, plan);
    handOff(run, 'model_failed', `the model could not be asked: ${failureText(error)}`);
    return null;
  }
}

/** Runs one reply's consequences: tools, a continuation, the end of the turn, or a hand-over. */
export async function afterReply(run: Run, reply: ModelReply, drainInbox: () => string[]): Promise<void> {
  const { id, s } = run;
  const plan = planReply(reply);
  if (plan.kind !== 'empty') s.emptyReplies = 0;
  switch (plan.kind) {
    case 'run_tools': {
      const results: ToolResultBlockParam[] = [];
      let unavailable: string | undefined;
      // A tool activity writes its whole result at the number reserved for it (in the reply's order) and returns a preview.
      const seqs = plan.uses.map(() => reserveResult(s));
      const outcomes = await runTools(run, plan.uses, seqs);
      for (const [i, use] of plan.uses.entries()) {
        const outcome = outcomes[i]!;
        unavailable ??= outcome.unavailable;
        results.push(resultBlock(use, outcome, seqs[i]!));
      }
      s.transcript.push(toolResultMessage(results, drainInbox()));
      if (unavailable) handOff(run, 'tool_unavailable', unavailable);
      else publish(id, s);
      return;
    }
    case 'continue':
      if (plan.results.length) s.transcript.push(toolResultMessage(plan.results, drainInbox()));
      if (plan.shrinkContext) s.shrinkContext = true;
      return;
    case 'empty':
      s.emptyReplies += 1;
      if (s.emptyReplies > MAX_EMPTY_REPLIES) {
        handOff(run, 'empty_replies', `the model gave ${s.emptyReplies} empty replies in a row`);
        return;
      }
      appendUserText(s.transcript, [{ type: 'text', text: EMPTY_REPLY_NUDGE }]);
      return;
    case 'refused':
      handOff(run, 'model_declined', `${MODEL_DECLINED_REASON}${plan.text ? `: ${plan.text.slice(0, 300)}` : ''}`);
      return;
    case 'reply': {
      const leaks = publicReplyLeaks(plan.text);
      if (leaks.length) {
        const what = describeLeaks(leaks);
        queueNote(run, replyHeldNote({ what, text: plan.text }));
        handOff(run, 'reply_held', `${REPLY_HELD_REASON} because it showed the customer ${what}`);
        return;
      }
      s.lastReply = plan.text;
      s.awaiting = 'customer';
      // A reply while a refund waits for approval leaves the ticket in the internal wait; otherwise it waits on the customer.
      queueReply(run, plan.text, s.pending ? undefined : 'awaiting_customer');
      return;
    }
  }
}
