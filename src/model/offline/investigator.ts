import type { ContentBlock, StopReason } from '@anthropic-ai/sdk/resources/messages';
import type { ModelRequest } from '../../schemas/model';
import { asText, called, latestResult, readConversation, type ConversationView, type SeenCall } from './conversation';
import { composeFollowUp, composeReply, money, type CaseFacts, type CaseKind } from './replies';
import { shopToolStep } from './shop-tools';

/** What the investigator decided this step: tool calls (with an optional opening line) or a reply. */
export interface Decision {
  text?: string;
  calls: { name: string; input: Record<string, unknown> }[];
}

type Obj = Record<string, unknown>;

const ORDER_PATTERNS = [/\border\s*(?:#|no\.?|number)?\s*(\d{3,6})\b/i, /#(\d{3,6})\b/];
const REMEMBER_PATTERNS = [
  /remember(?: for the future| this)?\s*[:,-]\s*([^\n]+)/i,
  /([^.\n]*\bdeliver(?:y|ies)\b[^.\n]*\b(?:must|should|always)\b[^.\n]*)/i,
  /([^.\n]*\bI (?:always )?prefer\b[^.\n]*)/i,
];
const DIRECTIVE_DRILL = /#drill:(\d{1,4})/i;

function orderIdIn(text: string): string | undefined {
  for (const pattern of ORDER_PATTERNS) {
    const match = pattern.exec(text);
    if (match) return match[1];
  }
  return undefined;
}

function factToRemember(text: string): string | undefined {
  for (const pattern of REMEMBER_PATTERNS) {
    const match = pattern.exec(text);
    const fact = match?.[1];
    if (fact !== undefined) return fact.trim().replace(/^[,;:\s]+/, '');
  }
  return undefined;
}

/** The last earlier-case order the customer memory block mentions, if any. */
function rememberedOrder(view: ConversationView): string | undefined {
  const block = /<customer_memory>[\s\S]*<\/customer_memory>/.exec(view.contextBlocks)?.[0] ?? '';
  return orderIdIn(block);
}

function refersToEarlier(text: string): boolean {
  return /\b(last time|again|before|previous(ly)?|same problem)\b/i.test(text);
}

/**
 * How many drill calls were made this turn. After compaction the early calls are out of view,
 * so the count resumes from the last "drill step N" the agent noted (notes survive compaction).
 */
function drillCallsDone(view: ConversationView): number {
  const noted = (text: string) => [...text.matchAll(/drill step (\d+)/g)].map((m) => Number(m[1]));
  const visible = view.turnCalls.map((c, index) => ({ index, steps: c.name === 'write_notes' ? noted(JSON.stringify(c.input)) : [] }));
  const last = Math.max(0, ...noted(view.contextBlocks), ...visible.flatMap((v) => v.steps));
  if (last === 0) return view.turnCalls.length;
  const at = visible.find((v) => v.steps.includes(last));
  return last + (at ? view.turnCalls.length - at.index - 1 : view.turnCalls.length);
}

/**
 * Scripted behaviour for the long-run test and the workflow bench: "#drill:N" makes N tool calls
 * (tracking pages, with a note every fifth step), then a short reply.
 */
function directive(view: ConversationView, text: string): Decision | undefined {
  // A directive compacted out of the conversation survives in the drill's own notes ("drill step N of M").
  const notedDrill = /drill step \d+ of (\d+)/.exec(`${view.contextBlocks}\n${JSON.stringify(view.turnCalls.map((c) => c.input))}`);
  const drill = DIRECTIVE_DRILL.exec(text) ?? notedDrill;
  if (drill) {
    const steps = Number(drill[1]);
    const done = drillCallsDone(view);
    if (done >= steps) return { text: `Drill finished after ${done} tool calls.`, calls: [] };
    const orderId = orderIdIn(text) ?? '5102';
    if (done % 5 === 4) return { calls: [{ name: 'write_notes', input: { found: [`drill step ${done + 1} of ${steps}`] } }] };
    return { calls: [{ name: 'get_tracking_events', input: { order_id: orderId, page: (done % 3) + 1 } }] };
  }
  return undefined;
}

function classify(text: string, order: Obj | undefined, tracking: Obj | undefined, payments: Obj | undefined): CaseKind {
  const events = JSON.stringify(tracking?.events ?? []).toLowerCase();
  if (payments?.possible_duplicate_charge === true || /charged twice|double charge|two charges|charged me twice/i.test(text)) return 'double_charge';
  if (/wrong building|block [a-z]\b/i.test(text) || events.includes('wrong building')) return 'wrong_building';
  if (/address (incorrect|wrong)|wrong address|incorrect address/.test(events) || /wrong address|blam/i.test(text)) return 'courier_blames_address';
  if (/never (arrived|came|got)|not (received|arrived)|didn'?t (arrive|get)|missing/i.test(text)) return 'not_delivered';
  if (asText(order?.status).toLowerCase().includes('deliver')) return 'not_delivered';
  return 'general';
}

const POLICY_TOPIC: Record<CaseKind, string> = {
  double_charge: 'customer charged twice for one order',
  not_delivered: 'parcel marked delivered but not received',
  wrong_building: 'parcel delivered to the wrong building or address',
  courier_blames_address: 'courier says the address was wrong',
  general: 'refund policy',
};

function duplicateAmount(payments: Obj | undefined): number | undefined {
  const charges = (payments?.charges as Obj[] | undefined) ?? [];
  if (charges.length < 2) return undefined;
  return Number(charges.at(-1)?.amount_cents) || undefined;
}

function refundAmount(kind: CaseKind, order: Obj | undefined, payments: Obj | undefined): number | undefined {
  let amount: number | undefined;
  if (kind === 'double_charge') amount = duplicateAmount(payments);
  else if (kind === 'not_delivered' || kind === 'wrong_building') amount = Number(order?.total_cents) || undefined;
  // Never ask for more than the payment records say can still be refunded.
  const refundable = payments?.refundable_cents;
  if (amount !== undefined && typeof refundable === 'number') amount = Math.min(amount, refundable);
  return amount && amount > 0 ? amount : undefined;
}

/** Needs a fresh result of `name`: never called, or called and since cleared (so call again). */
function needs(calls: SeenCall[], name: string, orderId?: string): boolean {
  if (latestResult(calls, name, orderId) !== undefined) return false;
  const tries = calls.filter((c) => c.name === name && (orderId === undefined || asText(c.input.order_id) === orderId));
  return tries.length === 0 || tries.every((c) => c.cleared);
}

/**
 * The offline investigator's policy: looks at what is visible in the request and decides the
 * next step of a plausible investigation through the real tools. Deterministic: the same
 * request always gives the same decision.
 */
export function decide(request: ModelRequest): Decision {
  const view = readConversation(request.messages);
  const turnText = (view.turnMessages.length ? view.turnMessages : view.allMessages.slice(-1)).join('\n');
  const scripted = directive(view, turnText);
  if (scripted) return scripted;
  const shopAsk = shopToolStep(request, view, turnText, orderIdIn(turnText));
  if (shopAsk) return shopAsk;

  const calls = view.turnCalls;
  const everything = view.calls;
  const opening: Decision['calls'] = [];

  const fact = factToRemember(turnText);
  if (fact && !called(calls, 'remember')) opening.push({ name: 'remember', input: { fact } });

  const earlierOrder = rememberedOrder(view);
  const sorry =
    earlierOrder && refersToEarlier(turnText) && !view.turnCalls.length
      ? `I'm sorry this has happened again after order ${earlierOrder}. Let me check where the courier left it this time.`
      : undefined;
  if (sorry && !called(calls, 'recall')) opening.push({ name: 'recall', input: { query: 'wrong building delivery' } });

  // A follow-up on a case already answered: answer from what was done, unless it names a new order.
  if (view.repliesSoFar > 0 && !orderIdIn(turnText)) {
    if (opening.length) return { calls: opening };
    return { text: composeFollowUp(turnText, everything), calls: [] };
  }

  // Tool inputs survive clearing, so an order chosen earlier this turn is still known.
  let orderId =
    orderIdIn(turnText) ??
    [...calls]
      .reverse()
      .find((c) => c.name === 'get_order' && !c.isError)
      ?.input.order_id?.toString();
  if (!orderId) {
    const orders = latestResult<Obj>(everything, 'list_orders');
    if (!orders) {
      if (needs(calls, 'list_orders')) return { text: sorry, calls: [...opening, { name: 'list_orders', input: {} }] };
    } else {
      const list = (orders.orders as Obj[] | undefined) ?? [];
      orderId = asText(list.find((o) => asText(o.order_id) !== earlierOrder)?.order_id ?? list[0]?.order_id);
    }
  }
  if (!orderId) return { text: 'I could not find an order on your account. Could you tell me the order number?', calls: [] };

  if (needs(everything, 'get_order', orderId)) {
    return { text: sorry, calls: [...opening, { name: 'get_order', input: { order_id: orderId } }] };
  }
  if (opening.length) return { text: sorry, calls: opening };
  const order = latestResult<Obj>(everything, 'get_order', orderId);
  if (!order && called(calls, 'get_order', orderId)) {
    const failure = calls.find((c) => c.name === 'get_order' && c.isError);
    return { text: `I could not look up order ${orderId}: ${asText(failure?.result, 'unknown error')} Could you check the order number?`, calls: [] };
  }

  // Pages already read count even when their results were cleared since; with nothing of the
  // tracking left in view, page 1 is read again for the reply.
  const pagesRead = everything.filter((c) => c.name === 'get_tracking_events' && String(c.input.order_id) === orderId && !c.isError);
  const trackingPages = pagesRead.filter((c) => !c.cleared);
  const lastRead = pagesRead.at(-1);
  const lastPage = lastRead?.result as Obj | undefined;
  if (trackingPages.length === 0) {
    return { calls: [{ name: 'get_tracking_events', input: { order_id: orderId, page: 1 } }] };
  }
  if (lastRead && !lastRead.cleared && lastPage?.next_page && pagesRead.length < 3) {
    return { calls: [{ name: 'get_tracking_events', input: { order_id: orderId, page: Number(lastPage.next_page) } }] };
  }
  if (needs(everything, 'get_payments', orderId)) return { calls: [{ name: 'get_payments', input: { order_id: orderId } }] };
  const payments = latestResult<Obj>(everything, 'get_payments', orderId);

  if (!called(calls, 'get_earlier_tickets')) return { calls: [{ name: 'get_earlier_tickets', input: { page: 1 } }] };
  const tickets = latestResult<Obj>(everything, 'get_earlier_tickets');
  const tracking = trackingPages.map((c) => c.result as Obj).find((r) => r && typeof r === 'object');
  const kind = classify(turnText, order, tracking, payments);
  if (tickets?.next_page && !called(calls, 'review_tickets')) {
    const about: Record<CaseKind, string> = {
      double_charge: 'a double charge',
      not_delivered: 'a missing parcel or a delayed parcel',
      wrong_building: 'the wrong building',
      courier_blames_address: 'the courier saying the address was wrong',
      general: 'this problem',
    };
    return { calls: [{ name: 'review_tickets', input: { question: `Which earlier tickets mention ${about[kind]}?` } }] };
  }

  if (needs(everything, 'lookup_policy')) return { calls: [{ name: 'lookup_policy', input: { topic: POLICY_TOPIC[kind] } }] };
  const policy = latestResult<Obj>(everything, 'lookup_policy');

  const amount = refundAmount(kind, order, payments);
  const refundCall = calls.find((c) => c.name === 'request_refund');
  if (amount && !refundCall) {
    const reason =
      kind === 'double_charge'
        ? `Customer charged twice for order ${orderId}; refunding the duplicate charge of ${money(amount)}.`
        : `Order ${orderId}: ${kind === 'wrong_building' ? 'left at the wrong building' : 'marked delivered but not received'}; refund per policy.`;
    // The kind names what the refund reverses, so the order ledger can bound it: the duplicate charge, or the goods' charge.
    const refundKind = kind === 'double_charge' ? 'duplicate_charge' : kind === 'not_delivered' || kind === 'wrong_building' ? 'not_received' : 'partial';
    return { calls: [{ name: 'request_refund', input: { order_id: orderId, amount_cents: amount, reason, kind: refundKind } }] };
  }
  const decision = refundCall?.result as Obj | undefined;
  if (decision?.decision === 'approved' && !called(calls, 'issue_refund')) {
    return { calls: [{ name: 'issue_refund', input: { request_id: String(decision.request_id) } }] };
  }

  const facts: CaseFacts = {
    kind,
    orderId,
    order,
    tracking,
    trackingEventsSeen: trackingPages.reduce((n, c) => n + (((c.result as Obj)?.events as unknown[]) ?? []).length, 0),
    payments,
    policy,
    review: latestResult<Obj>(everything, 'review_tickets'),
    recall: latestResult(everything, 'recall'),
    refundRequest: refundCall?.isError ? { error: String(refundCall.result) } : decision,
    refund: latestResult<Obj>(calls, 'issue_refund'),
    earlierOrder,
  };
  return { text: composeReply(facts), calls: [] };
}

/** Turns a decision into Messages API content blocks with deterministic tool_use ids. */
export function toContent(decision: Decision, idSeed: string): { content: ContentBlock[]; stop_reason: StopReason } {
  const content: ContentBlock[] = [];
  if (decision.text) content.push({ type: 'text', text: decision.text, citations: null });
  decision.calls.forEach((call, index) => {
    content.push({ type: 'tool_use', id: `toolu_off_${idSeed}_${index}`, name: call.name, input: call.input, caller: { type: 'direct' } });
  });
  return { content, stop_reason: decision.calls.length ? 'tool_use' : 'end_turn' };
}
