// What a public reply must never show a customer: casework's own ids and markers, tool errors,
// stack traces, amounts in minor units. Pure and deterministic, so the workflow checks every
// reply before queueing it for the desk; a reply that fails goes to the team as an internal
// note instead, and the case to a person (src/workflows/hand-off.ts).

/** Kinds of internal detail a public reply is checked for. */
export type LeakKind = 'marker' | 'internal_id' | 'minor_units' | 'tool_error' | 'stack_trace';

/** One thing found: its kind and a short excerpt (for the internal note, never the customer). */
export interface Leak {
  kind: LeakKind;
  excerpt: string;
}

const PATTERNS: readonly [LeakKind, RegExp][] = [
  // Idempotency keys ("cw" + 24 hex), their "ref:" line and Zendesk tags.
  ['marker', /\bcw[0-9a-f]{24}\b|\bref:\s*cw[0-9a-f]{6,}|\bcasework_[a-z_]+\b/i],
  // Refund requests, approvals and refunds (src/activities/tools/refunds.ts), workflow ids, tool-call ids.
  ['internal_id', /\b(?:req|apr|rfd)_[0-9a-f]{8,}\b|\binvestigation-[A-Za-z0-9][\w.-]*|\btoolu_[A-Za-z0-9]+|\b[a-z]+_id"?\s*[:=]/],
  // casework stores amounts in minor units; a customer is told money, never "1099 cents".
  ['minor_units', /\bcents\b|\b\w+_cents\b/i],
  ['tool_error', /\bis_error\b|\btool_(?:use|result)\b|\b[A-Z][A-Za-z]*(?:Error|Exception)\b|\bSQLSTATE\b|\bE(?:CONNREFUSED|CONNRESET|TIMEDOUT)\b|\bHTTP [45]\d\d\b/],
  ['stack_trace', /^\s*at \S.*:\d+:\d+\)?\s*$|\.[cm]?[jt]s:\d+:\d+\b/m],
];

/** Everything internal found in `text`, at most one finding per kind; empty when the reply is fit for a customer. */
export function publicReplyLeaks(text: string): Leak[] {
  const found: Leak[] = [];
  for (const [kind, pattern] of PATTERNS) {
    const match = pattern.exec(text);
    if (match) found.push({ kind, excerpt: match[0].trim().slice(0, 80) });
  }
  return found;
}

/** One line for the team: what the held-back reply showed, by kind ("a marker, an internal id"). */
export function describeLeaks(leaks: readonly Leak[]): string {
  const words: Record<LeakKind, string> = {
    marker: "casework's idempotency marker",
    internal_id: 'an internal id',
    minor_units: 'an amount in cents',
    tool_error: 'a tool or system error',
    stack_trace: 'a stack trace',
  };
  return leaks.map((l) => `${words[l.kind]} ("${l.excerpt}")`).join(', ');
}
