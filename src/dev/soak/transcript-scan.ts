import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type { TranscriptLog } from '../../db/transcript-log';
import { decodeHistoryPayloads } from '../../temporal/history-payloads';
import { findInfrastructureText } from './infra-text';

// Reads what an investigation said and what its model was shown, from the workflow history of
// every run of it (the history is the task state: each model reply is a callModel or
// callModelOnPlan result, each request a callModel input) and, for runs that keep their
// conversation by reference, from the transcript log, where the tool results the model was
// shown are; and finds infrastructure text in either.

/** One piece of infrastructure text found, with where it was. */
export interface InfraFinding {
  workflowId: string;
  /** 'reply': text the investigation wrote (the customer reads it); 'model input': a tool result the model was shown. */
  where: 'reply' | 'model input';
  name: string;
  match: string;
  excerpt: string;
}

/** What the histories of one investigation hold. */
export interface TranscriptScan {
  runs: number;
  /** Distinct texts the investigation wrote (every assistant text block and the final lastReply). */
  replies: number;
  /** Distinct tool results the model was shown. */
  toolResults: number;
  findings: InfraFinding[];
}

type Block = { type?: string; text?: unknown; content?: unknown };
type Message = { role?: string; content?: unknown };

function blocks(content: unknown): Block[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? (content as Block[]) : [];
}

function toolResultText(block: Block): string {
  if (typeof block.content === 'string') return block.content;
  return blocks(block.content)
    .map((b) => (typeof b.text === 'string' ? b.text : ''))
    .join('\n');
}

function excerptAround(text: string, match: string): string {
  const at = Math.max(0, text.indexOf(match) - 60);
  return text.slice(at, at + 180).replace(/\s+/g, ' ');
}

/** Reads every run of `workflowId` (and its transcript log, when given) and scans its replies and the model's tool results. */
export async function scanTranscript(client: Client, workflowId: string, finalReply: string | null, log?: TranscriptLog): Promise<TranscriptScan> {
  const converter = client.options.loadedDataConverter;
  const replies = new Set<string>();
  const toolResults = new Set<string>();
  if (finalReply) replies.add(finalReply);
  const runIds: string[] = [];
  for await (const info of client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) runIds.push(info.runId);

  const addTranscript = (messages: Message[]) => {
    for (const message of messages) {
      for (const block of blocks(message.content)) {
        if (message.role === 'assistant' && block.type === 'text' && typeof block.text === 'string') replies.add(block.text);
        if (block.type === 'tool_result') toolResults.add(toolResultText(block));
      }
    }
  };

  for (const runId of runIds) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const scheduled = new Map<string, string>();
    for (const event of (history.events ?? []) as temporal.api.history.v1.IHistoryEvent[]) {
      const started = event.workflowExecutionStartedEventAttributes;
      if (started) {
        const [input] = (await decodeHistoryPayloads(converter, started.input?.payloads)) as { carried?: { transcript?: Message[] } }[];
        addTranscript(input?.carried?.transcript ?? []);
      }
      const sched = event.activityTaskScheduledEventAttributes;
      if (sched) {
        const name = sched.activityType?.name ?? '';
        scheduled.set(String(event.eventId), name);
        if (name === 'callModel') {
          const [request] = (await decodeHistoryPayloads(converter, sched.input?.payloads)) as { messages?: Message[] }[];
          addTranscript(request?.messages ?? []);
        }
      }
      const done = event.activityTaskCompletedEventAttributes;
      const doneName = done ? scheduled.get(String(done.scheduledEventId)) : undefined;
      if (done && (doneName === 'callModel' || doneName === 'callModelOnPlan')) {
        const [reply] = (await decodeHistoryPayloads(converter, done.result?.payloads)) as { content?: unknown }[];
        addTranscript([{ role: 'assistant', content: reply?.content }]);
      }
      const completed = event.workflowExecutionCompletedEventAttributes;
      if (completed) {
        const [result] = (await decodeHistoryPayloads(converter, completed.result?.payloads)) as { lastReply?: string | null }[];
        if (result?.lastReply) replies.add(result.lastReply);
      }
    }
  }

  // By reference the history holds previews of tool results; the whole ones, as the model saw them, are in the log.
  if (log) addTranscript((await log.all(workflowId, ['message'])).map((entry) => ({ role: entry.role, content: [entry.body] })));

  const findings: InfraFinding[] = [];
  const scan = (texts: Set<string>, where: InfraFinding['where']) => {
    for (const text of texts) {
      const found = findInfrastructureText(text);
      if (found) findings.push({ workflowId, where, ...found, excerpt: excerptAround(text, found.match) });
    }
  };
  scan(replies, 'reply');
  scan(toolResults, 'model input');
  return { runs: runIds.length, replies: replies.size, toolResults: toolResults.size, findings };
}
