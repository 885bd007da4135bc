import { asText, type SeenCall } from './conversation';

/** The kinds of case the offline investigator tells apart. */
export type CaseKind = 'double_charge' | 'not_delivered' | 'wrong_building' | 'courier_blames_address' | 'general';

type Obj = Record<string, unknown>;

/** Everything the final reply may cite, each from a tool result. */
export interface CaseFacts {
  kind: CaseKind;
  orderId: string;
  order?: Obj;
  tracking?: Obj;
  trackingEventsSeen: number;
  payments?: Obj;
  policy?: Obj;
  review?: Obj;
  recall?: unknown;
  refundRequest?: Obj;
  refund?: Obj;
  earlierOrder?: string;
}

/** Formats integer pence as pounds (the demo shop sells in GBP), e.g. 4999 -> "£49.99". */
export function money(cents: unknown): string {
  const n = Number(cents);
  return Number.isFinite(n) ? `£${(n / 100).toFixed(2)}` : 'the amount';
}

const SIGN_OFF = '— drafted by the offline investigator (deterministic test double, no language model)';

function latestEvent(tracking: Obj | undefined): Obj | undefined {
  const events = (tracking?.events as Obj[] | undefined) ?? [];
  return events[0];
}

function describeEvent(event: Obj | undefined): string {
  if (!event) return 'no tracking events';
  const where = event.location ? ` at ${asText(event.location)}` : '';
  const when = event.at ? ` on ${asText(event.at).slice(0, 10)}` : '';
  const detail = event.detail ? ` (${asText(event.detail)})` : '';
  return `"${String(event.status)}"${where}${when}${detail}`;
}

function firstSentence(text: unknown): string {
  const s = asText(text).trim();
  const end = s.search(/[.!?](\s|$)/);
  return end > 0 ? s.slice(0, end + 1) : s;
}

function refundSentence(facts: CaseFacts): string {
  const request = facts.refundRequest;
  if (!request) return '';
  // The tool's refusal is for the investigation, not the customer (it names amounts and requests in casework's own terms).
  if (typeof request.error === 'string') return 'I could not request a refund for this order myself; a colleague will look at it and reply to you here.';
  if (request.decision === 'approved') {
    const amount = facts.refund?.amount_cents ?? request.amount_cents;
    return facts.refund
      ? `A refund of ${money(amount)} was approved by ${String(request.decided_by)} and has been issued; your bank may take a few days to show it.`
      : `A refund was approved by ${String(request.decided_by)}.`;
  }
  if (request.status === 'awaiting_approval' && !request.decision) {
    return `I have asked for a refund of ${money(request.amount_cents)}; a colleague is reviewing it now, and I will write again here as soon as it is decided.`;
  }
  if (request.decision === 'denied') {
    return `I asked for a refund, but it was not approved (${asText(request.reason, 'no reason given')}). A colleague will follow up with the next step.`;
  }
  return '';
}

/** The customer reply at the end of an investigation, citing each source by name. */
export function composeReply(facts: CaseFacts): string {
  const lines: string[] = [];
  const order = facts.order ?? {};
  if (facts.earlierOrder && facts.earlierOrder !== facts.orderId) {
    lines.push(`I'm sorry this has happened again after order ${facts.earlierOrder}.`);
  }
  lines.push(`I've looked into order ${facts.orderId} (${money(order.total_cents)}, status: ${asText(order.status, 'unknown')}, order record).`);
  const event = latestEvent(facts.tracking);
  switch (facts.kind) {
    case 'double_charge': {
      const charges = ((facts.payments?.charges as Obj[] | undefined) ?? []).map((c) => `${money(c.amount_cents)} on ${String(c.at).slice(0, 16)}`);
      lines.push(`The payment records show ${charges.length} charges for this order (${charges.join(' and ')}), so you were charged twice (payments).`);
      break;
    }
    case 'courier_blames_address':
      lines.push(
        `The courier's latest tracking event is ${describeEvent(event)} (tracking), but the delivery address on the order is ${asText(order.delivery_address, 'on file')} (order record), so the address was not the problem.`,
      );
      break;
    default:
      lines.push(`The courier's latest tracking event is ${describeEvent(event)}; I read ${facts.trackingEventsSeen} tracking events (tracking).`);
  }
  if (facts.review?.answer) lines.push(`From your earlier tickets: ${firstSentence(facts.review.answer)} (earlier tickets).`);
  if (facts.policy?.title) lines.push(`Our policy "${asText(facts.policy.title)}" says: ${firstSentence(facts.policy.text)} (policy).`);
  const refund = refundSentence(facts);
  const refunded = Number(facts.payments?.refunded_cents ?? 0);
  if (refund) lines.push(refund);
  else if (refunded > 0) lines.push(`This order has already been refunded ${money(refunded)} (payments), so there is nothing more to refund.`);
  else if (facts.kind === 'courier_blames_address') lines.push('I have not promised anything the records do not support; a colleague will take this up with the courier.');
  lines.push(SIGN_OFF);
  return lines.join('\n\n');
}

/** A reply to a follow-up message, from what the investigation already did. */
export function composeFollowUp(text: string, calls: SeenCall[]): string {
  const issued = [...calls].reverse().find((c) => c.name === 'issue_refund' && !c.isError && c.result && typeof c.result === 'object');
  const requested = [...calls].reverse().find((c) => c.name === 'request_refund' && c.result && typeof c.result === 'object');
  const lines: string[] = [];
  if (issued) {
    const refund = issued.result as Obj;
    lines.push(`Your refund of ${money(refund.amount_cents)} has been issued; banks usually show it within 5 to 10 business days.`);
  } else if (requested && (requested.result as Obj).decision === 'denied') {
    lines.push('The refund I asked for was not approved; a colleague will contact you about the next step.');
  } else {
    lines.push('Thank you for your message. I have added it to your case.');
  }
  if (/\?/.test(text) && !issued) lines.push('I have no further records to check for that question, so a colleague will reply to it here.');
  lines.push(SIGN_OFF);
  return lines.join('\n\n');
}
