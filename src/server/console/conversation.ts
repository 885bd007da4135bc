import type { ContentBlockParam, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { toolSentence } from '../../context/tool-evidence';
import { customerWords, DECISION_PREFIX } from '../../context/wire';
import type { HandOff, InvestigationStatus, RefundDecision } from '../../schemas/investigation';
import { HOLDING_REPLY, MODEL_DECLINED_REASON, REPLY_HELD_REASON } from '../../workflows/hand-off';
import { toolResults, type ToolCall } from './tool-calls';

// A case's conversation as a person reads it, in the order it happened: the customer's words,
// the replies (casework's or a person's, and the ones held back), every tool call with its
// whole result and a sentence saying what it found, refund requests and decisions with who
// decided, and each hand-over to a person with why and how it ended. Pure: built from the
// transcript (every word, from the transcript log for runs kept by reference) and the status.

/** A refund decision as the conversation shows it. */
export interface DecisionEntry {
  kind: 'decision';
  requestId: string;
  decision: RefundDecision['decision'];
  /** The approver name the limits were checked against. */
  approver: string;
  /** The person who decided, when they named themselves otherwise (console sign-in). */
  decidedBy?: string;
  /** Through what: "cli", "http", the console key's label. */
  via?: string;
  reason: string | null;
  /** What was paid on the approval, when anything was. */
  paid: { refundId: string; amountCents: number; currency?: string } | null;
  /** Approved, but the order ledger refused to pay: its words. */
  refused?: string;
  /** False while the decision is recorded but casework has not acted on it yet. */
  settled: boolean;
}

/** One entry of the conversation. */
export type ConversationEntry =
  | { kind: 'customer'; text: string }
  /** A reply to the customer: casework's (`by` null) or a person's; `sent` false when it was held back. */
  | { kind: 'reply'; text: string; by: string | null; sent: boolean }
  /** What the agent wrote beside its tool calls: never sent to the customer. */
  | { kind: 'agent_note'; text: string }
  | { kind: 'thinking'; text: string }
  | { kind: 'tool'; call: ToolCall; sentence: string }
  | { kind: 'refund_requested'; call: ToolCall; amountCents?: number; currency?: string; orderId?: string; reason?: string; requestId?: string; waiting: boolean }
  | DecisionEntry
  | { kind: 'hand_off'; reason: string | null; at: string | null; resolution: HandOff['resolution'] }
  /** What casework itself told the agent (a person resuming the case, a nudge after an empty reply). */
  | { kind: 'note'; text: string };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const blocksOf = (message: MessageParam): ContentBlockParam[] => (typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content);

/** Each order's currency, as the results that name an order give it (get_order, get_payments, request_refund). */
function currenciesByOrder(results: Iterable<{ text: string }>): Map<string, string> {
  const out = new Map<string, string>();
  for (const { text } of results) {
    const parsed = parseJson(text);
    const order = isObject(parsed) ? str(parsed.order_id) : undefined;
    const currency = isObject(parsed) ? str(parsed.currency) : undefined;
    if (order && currency && !out.has(order)) out.set(order, currency);
  }
  return out;
}

/** The hand-overs the status records, laid against the holding replies of the transcript from the end (a rebuilt transcript may lack the first). */
function handOffsFor(status: InvestigationStatus, holdingReplies: number): (HandOff | null)[] {
  const known = status.handOffs ?? (status.handOff ? [status.handOff] : []);
  return Array.from({ length: holdingReplies }, (_, i) => known[known.length - holdingReplies + i] ?? null);
}

function decisionEntry(note: Json, status: InvestigationStatus, currencies: Map<string, string>, requests: Map<string, { orderId?: string }>): DecisionEntry | null {
  const requestId = str(note.request_id);
  const decision = note.decision === 'approved' || note.decision === 'denied' ? note.decision : undefined;
  if (!requestId || !decision) return null;
  const recorded = status.decisions.find((d) => d.requestId === requestId);
  const refund = isObject(note.refund) ? note.refund : null;
  const paidRecord = status.refunds.find((r) => r.request_id === requestId);
  const orderId = requests.get(requestId)?.orderId ?? paidRecord?.order_id;
  const currency = paidRecord?.currency ?? (orderId ? currencies.get(orderId) : undefined);
  const refundId = refund ? str(refund.refund_id) : undefined;
  const amountCents = refund ? num(refund.amount_cents) : undefined;
  return {
    kind: 'decision',
    requestId,
    decision,
    approver: str(note.decided_by) ?? recorded?.approver ?? 'unknown',
    ...(recorded?.decidedBy && recorded.decidedBy !== recorded.approver ? { decidedBy: recorded.decidedBy } : {}),
    ...(recorded?.via ? { via: recorded.via } : {}),
    reason: str(note.reason) ?? null,
    paid: refundId && amountCents !== undefined ? { refundId, amountCents, ...(currency ? { currency } : {}) } : null,
    ...(str(note.refused) ? { refused: str(note.refused) } : {}),
    settled: true,
  };
}

/** A decision as the status records it: `settled` false while casework has not acted on it (its note is not in the transcript yet). */
function recordedDecision(d: RefundDecision, status: InvestigationStatus, settled: boolean): DecisionEntry {
  const paid = settled ? status.refunds.find((r) => r.request_id === d.requestId) : undefined;
  return {
    kind: 'decision',
    requestId: d.requestId,
    decision: d.decision,
    approver: d.approver,
    ...(d.decidedBy && d.decidedBy !== d.approver ? { decidedBy: d.decidedBy } : {}),
    ...(d.via ? { via: d.via } : {}),
    reason: d.reason ?? null,
    paid: paid ? { refundId: paid.refund_id, amountCents: paid.amount_cents, ...(paid.currency ? { currency: paid.currency } : {}) } : null,
    settled,
  };
}

/** The conversation of a case, in order (see the module note). */
export function conversationOf(transcript: readonly MessageParam[], status: InvestigationStatus): ConversationEntry[] {
  const results = toolResults(transcript);
  const currencies = currenciesByOrder(results.values());
  const fallbackCurrency = status.pendingApproval?.currency ?? status.refunds.find((r) => r.currency)?.currency;
  const holding = transcript
    .filter((m) => m.role === 'assistant')
    .flatMap(blocksOf)
    .filter((b) => b.type === 'text' && b.text === HOLDING_REPLY).length;
  const handOffs = handOffsFor(status, holding);
  const requests = new Map<string, { orderId?: string }>();
  const out: ConversationEntry[] = [];
  let handOffIndex = 0;
  // A person's reply follows the hand-over it answered: the next reply in the transcript is theirs.
  let personReplying: string | null = null;

  for (const message of transcript) {
    const blocks = blocksOf(message);
    if (message.role === 'user') {
      for (const block of blocks) {
        if (block.type !== 'text') continue;
        const words = customerWords(block.text);
        if (words !== undefined) out.push({ kind: 'customer', text: words });
        else if (block.text.startsWith(DECISION_PREFIX)) {
          const note = parseJson(block.text.slice(DECISION_PREFIX.length));
          const entry = isObject(note) ? decisionEntry(note, status, currencies, requests) : null;
          out.push(entry ?? { kind: 'note', text: block.text });
        } else out.push({ kind: 'note', text: block.text });
      }
      continue;
    }
    const lastToolUse = blocks.reduce((at, b, i) => (b.type === 'tool_use' ? i : at), -1);
    let replyInMessage: Extract<ConversationEntry, { kind: 'reply' }> | null = null;
    blocks.forEach((block, i) => {
      if (block.type === 'thinking') {
        if (block.thinking.trim()) out.push({ kind: 'thinking', text: block.thinking });
      } else if (block.type === 'tool_use') {
        const result = results.get(block.id);
        const call: ToolCall = { id: block.id, name: block.name, input: block.input, result: result?.text ?? '', isError: result?.isError ?? false };
        const input = isObject(block.input) ? block.input : {};
        const orderId = str(input.order_id);
        const currency = (orderId && currencies.get(orderId)) || fallbackCurrency;
        if (block.name === 'request_refund') {
          const answered = result && !result.isError ? parseJson(result.text) : undefined;
          const requestId = isObject(answered) ? str(answered.request_id) : undefined;
          if (requestId) requests.set(requestId, { ...(orderId ? { orderId } : {}) });
          out.push({
            kind: 'refund_requested',
            call,
            ...(num(input.amount_cents) !== undefined ? { amountCents: num(input.amount_cents) } : {}),
            ...(currency ? { currency } : {}),
            ...(orderId ? { orderId } : {}),
            ...(str(input.reason) ? { reason: str(input.reason) } : {}),
            ...(requestId ? { requestId } : {}),
            waiting: Boolean(requestId && status.pendingApproval?.request_id === requestId && !status.decisions.some((d) => d.requestId === requestId)),
          });
        } else {
          out.push({ kind: 'tool', call, sentence: result ? (result.isError ? result.text : toolSentence(block.name, result.text, currency)) : '' });
        }
      } else if (block.type === 'text') {
        if (block.text === HOLDING_REPLY) {
          const handOff = handOffs[handOffIndex++] ?? null;
          const reason = handOff?.reason ?? '';
          // The words before it in the same reply never reached the customer: held back, or the model's refusal.
          if (replyInMessage && !replyInMessage.by && (reason.startsWith(REPLY_HELD_REASON) || reason.startsWith(MODEL_DECLINED_REASON))) replyInMessage.sent = false;
          out.push({ kind: 'hand_off', reason: handOff?.reason ?? null, at: handOff?.at ?? null, resolution: handOff?.resolution ?? null });
          out.push({ kind: 'reply', text: block.text, by: null, sent: true });
          personReplying = handOff?.resolution?.action === 'replied' ? handOff.resolution.by : null;
          replyInMessage = null;
        } else if (i < lastToolUse) {
          out.push({ kind: 'agent_note', text: block.text });
        } else {
          replyInMessage = { kind: 'reply', text: block.text, by: personReplying, sent: true };
          personReplying = null;
          out.push(replyInMessage);
        }
      }
    });
  }
  const settledIds = new Set(out.flatMap((e) => (e.kind === 'decision' ? [e.requestId] : [])));
  for (const d of status.decisions) if (!settledIds.has(d.requestId)) out.push(recordedDecision(d, status, false));
  return out;
}

/** What the status alone says of a conversation that cannot be read: the hand-overs, the decisions and the last reply. */
export function statusOnlyConversation(status: InvestigationStatus): ConversationEntry[] {
  const handOffs = status.handOffs ?? (status.handOff ? [status.handOff] : []);
  return [
    ...handOffs.map((h): ConversationEntry => ({ kind: 'hand_off', reason: h.reason, at: h.at, resolution: h.resolution })),
    ...status.decisions.map((d) => recordedDecision(d, status, true)),
    ...(status.lastReply ? [{ kind: 'reply' as const, text: status.lastReply, by: null, sent: true }] : []),
  ];
}
