import type { InvestigationStatus, StepRecord } from '../schemas/investigation';
import type { TokenUsage } from '../schemas/model';
import { describeLedger } from '../context/ledger';
import { formatMoney } from '../context/money';

// How the CLI and the demo show an investigation to a person. Pure: status in, lines out.

const n = (value: number) => value.toLocaleString('en-US');

/** An amount in minor units (pence) as the shop shows it. Token costs stay in USD. */
export const money = (minor: number) => `£${(minor / 100).toFixed(2)}`;

/** Tokens sent on one call: uncached + cache write + cache read. */
export function tokensSent(usage: TokenUsage): number {
  return usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens;
}

/** One table row per step: tools called, tokens sent (split by cache), output, cost. */
export function stepTable(steps: readonly StepRecord[], options: { toolsWidth?: number } = {}): string[] {
  const header = ['step', 'tools called', 'sent', 'uncached', 'cache write', 'cache read', 'output', 'cost'];
  const rows = steps.map((s) => [
    String(s.step),
    (s.tools.length ? s.tools.join(', ') : '(reply)') + (s.context_event ? `  [${s.context_event}]` : ''),
    n(tokensSent(s.usage)),
    n(s.usage.input_tokens),
    n(s.usage.cache_creation_input_tokens),
    n(s.usage.cache_read_input_tokens),
    n(s.usage.output_tokens),
    `$${s.cost_usd.toFixed(4)}`,
  ]);
  // A fixed tools column keeps rows printed one at a time (the demo) aligned with the header.
  const widths = header.map((h, i) => Math.max(h.length, i === 1 ? (options.toolsWidth ?? 0) : 0, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 1 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}

/** The run's totals in one line. */
export function totalsLine(status: InvestigationStatus): string {
  const t = status.totals;
  return (
    `total: ${status.step} steps, ${n(tokensSent(t))} input tokens sent ` +
    `(${n(t.input_tokens)} uncached, ${n(t.cache_creation_input_tokens)} cache write, ${n(t.cache_read_input_tokens)} cache read), ` +
    `${n(t.output_tokens)} output, $${t.cost_usd.toFixed(4)}`
  );
}

/** The Temporal web UI page of a workflow. */
export function workflowUrl(uiUrl: string, namespace: string, workflowId: string): string {
  return `${uiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

/** A person-readable status: state, pending approval, last reply, totals. */
export function describeStatus(status: InvestigationStatus, options: { uiUrl?: string; namespace?: string; steps?: boolean } = {}): string[] {
  const lines = [
    `${status.workflowId}  ticket ${status.ticketId}  customer ${status.customerId}`,
    `state: ${status.status}, step ${status.step}${status.model ? `, model ${status.model}` : ''}${status.continuedAsNew ? `, continued as new ${status.continuedAsNew}x` : ''}`,
  ];
  const p = status.pendingApproval;
  if (p) {
    const m = (cents: number) => formatMoney(cents, p.currency);
    const who = p.approvers.map((a) => `${a.name} (up to ${m(a.limit_cents)})`).join(', ');
    const what = p.kind ? ` ${p.kind.replace('_', ' ')}${p.charge_id ? ` of charge ${p.charge_id}` : ''}` : '';
    lines.push(`pending refund ${p.request_id}: ${m(p.amount_cents)}${what} on order ${p.order_id}, requested ${p.requested_at}`, `  reason: ${p.reason}`, `  may approve: ${who}`);
    if (p.overlaps?.length) lines.push(`  overlaps ${p.overlaps.join(', ')}, pending in another case for the same money`);
    if (p.ledger) lines.push(...describeLedger(p.ledger, { except: p.request_id }).map((l) => `  ${l}`));
  }
  for (const d of status.decisions) {
    const by = d.decidedBy && d.decidedBy !== d.approver ? ` (${d.decidedBy}${d.via ? `, ${d.via}` : ''})` : '';
    lines.push(`refund ${d.requestId} ${d.decision} by ${d.approver}${by}${d.reason ? `: ${d.reason}` : ''}`);
  }
  for (const r of status.refunds ?? []) lines.push(`refund ${r.refund_id} of ${formatMoney(r.amount_cents, r.currency)} paid on order ${r.order_id} (request ${r.request_id})`);
  for (const r of status.refusedRefunds ?? []) lines.push(`refund ${r.request_id} on order ${r.order_id}, approved by ${r.approver}, was refused by the order ledger: ${r.reason}`);
  if (status.handOff) {
    lines.push(`needs a person since ${status.handOff.at} (step ${status.handOff.step}): ${status.handOff.reason}`);
    lines.push(`  carry on: casework resume ${status.workflowId} --by <name>   or answer: casework reply ${status.workflowId} --by <name> --text "…"`);
  }
  const r = status.recoveredFrom;
  if (r) lines.push(`recovered from ${r.runStatus} run ${r.runId} at ${r.at} (transcript ${r.transcript.replace('_', ' ')})`);
  if (options.steps && status.steps.length) lines.push('', ...stepTable(status.steps), '');
  lines.push(totalsLine(status));
  if (status.lastReply) lines.push('', 'last reply:', ...status.lastReply.split('\n').map((l) => `  ${l}`));
  if (options.uiUrl) lines.push('', `web UI: ${workflowUrl(options.uiUrl, options.namespace ?? 'default', status.workflowId)}`);
  return lines;
}
