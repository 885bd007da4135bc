import { totalInputTokens } from '../../context/accounting';
import type { InvestigationSettings } from '../../schemas/investigation';
import type { CaseView } from './cases';
import { marksOf, tokensChart } from './chart';
import { count, money, usd, when } from './format';
import { html, trusted } from './html';
import { mayOpenMemory, page } from './layout';
import { callAnchor, conversationSection } from './conversation-view';
import { cachedComparison, noClearingEstimate } from './no-clearing';
import type { CustomerRefs } from './refs';
import type { Session } from './session';
import { oneLine, toolCallsBySteps } from './tool-calls';

// A case's page: its conversation (conversation-view.ts), then its timeline: every step with
// its tools (each linked to its whole result in the conversation), tokens, cache use, cost and
// context events, the chart of tokens sent per step, the run's totals beside the estimate with
// no clearing, and a link to the run in the Temporal web UI.

/** What the timeline needs besides the case. */
export interface TimelineContext {
  session: Session;
  settings: Pick<InvestigationSettings, 'keepRecent' | 'prices'>;
  refs: CustomerRefs;
  temporalUiUrl: string;
  namespace: string;
}

/** The run's page in the Temporal web UI. */
export function temporalUiLink(base: string, namespace: string, workflowId: string, runId: string): string {
  return `${base.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}/${encodeURIComponent(runId)}/history`;
}

/** The timeline page. */
export function timelinePage(view: CaseView, ctx: TimelineContext): string {
  const { status } = view;
  const calls = view.transcript ? toolCallsBySteps(status.steps, view.transcript) : status.steps.map(() => null);
  const currency = status.pendingApproval?.currency ?? status.refunds.find((r) => r.currency)?.currency;
  const estimate = view.transcript ? noClearingEstimate(status.steps, view.transcript, ctx.settings.keepRecent, ctx.settings.prices) : null;
  const cached = view.transcript ? cachedComparison(status.steps, view.transcript, ctx.settings.keepRecent, ctx.settings.prices) : null;
  const saving = cached
    ? `${cached.savingUsd >= 0 ? 'saved' : 'cost'} ${usd(Math.abs(cached.savingUsd))} of input (with caching, an estimate: ${usd(cached.noClearingInputUsd)} with no clearing)`
    : 'unavailable';
  const sent = status.steps.reduce((n, s) => n + totalInputTokens(s.usage), 0);
  const batches = status.steps.filter((s) => marksOf(s).clearing).length;
  const compactions = status.steps.filter((s) => marksOf(s).compaction).length;
  const body = html` <h1>Case ${status.ticketId} <span class="muted">· ${status.status.replace(/_/g, ' ')}</span></h1>
    <div class="facts card">
      <div>
        <span>Customer</span>${mayOpenMemory(ctx.session) ? html`<a href="/console/customers/${ctx.refs.refOf(status.customerId)}">${status.customerId}</a>` : status.customerId}
      </div>
      <div><span>Status</span><span data-case-status>${status.status}</span></div>
      <div><span>Steps</span>${status.step}</div>
      <div><span>Model</span>${status.model ?? 'none yet'}</div>
      <div><span>Continued as new</span>${status.continuedAsNew} time(s)</div>
      <div><span>Context strategy</span><span data-context-strategy>${status.contextStrategy ?? 'not recorded (a run from before strategies were)'}</span></div>
      <div><span>Against no clearing</span><span data-clearing-saving>${saving}</span></div>
      <div><span>Temporal</span><a href="${temporalUiLink(ctx.temporalUiUrl, ctx.namespace, view.workflowId, view.runId)}" rel="noreferrer">this run in the web UI</a></div>
    </div>
    ${status.pendingApproval ? html`<p class="notice">Waiting for a refund decision: ${money(status.pendingApproval.amount_cents, status.pendingApproval.currency)} on order ${status.pendingApproval.order_id}. <a href="/console/inbox">Open the inbox</a></p>` : ''}
    ${status.refunds.length ? html`<p>Refunds paid: ${status.refunds.map((r) => `${money(r.amount_cents, r.currency)} on order ${r.order_id} (${r.refund_id})`).join('; ')}</p>` : ''}
    ${
      status.refusedRefunds?.length
        ? html`<p class="flash error" data-refused-refunds>
            Refunds approved but refused by the order ledger (nothing paid):
            ${status.refusedRefunds.map((r) => `${r.request_id} on order ${r.order_id}, approved by ${r.approver}: ${r.reason}`).join('; ')}
          </p>`
        : ''
    }
    ${status.decisions.length ? html`<p>Decisions: ${status.decisions.map((d) => `${d.decision} by ${d.approver}${d.decidedBy && d.decidedBy !== d.approver ? ` (${d.decidedBy})` : ''}${d.reason ? ` (“${d.reason}”)` : ''}`).join('; ')}</p>` : ''}
    ${conversationSection(view)}
    <h2>Tokens sent per step</h2>
    <div class="legend"><span>● tokens sent</span><span class="k-clearing">┆ clearing batch (${batches})</span><span class="k-compaction">┆ compaction (${compactions})</span></div>
    ${trusted(tokensChart(status.steps))}
    <h2>Totals</h2>
    <div class="table-wrap">
      <table>
        <tr>
          <th>tokens sent</th>
          <th class="num">uncached</th>
          <th class="num">cache write</th>
          <th class="num">cache read</th>
          <th class="num">output</th>
          <th class="num">cost</th>
          <th class="num">cost with no clearing (estimate)</th>
        </tr>
        <tr data-totals>
          <td>${count(sent)}</td>
          <td class="num">${count(status.totals.input_tokens)}</td>
          <td class="num">${count(status.totals.cache_creation_input_tokens)}</td>
          <td class="num">${count(status.totals.cache_read_input_tokens)}</td>
          <td class="num">${count(status.totals.output_tokens)}</td>
          <td class="num">${usd(status.totals.cost_usd)}</td>
          <td class="num">
            ${estimate ? html`${usd(status.totals.cost_usd + estimate.extraCostUsd)} <span class="muted">(+${count(estimate.extraInputTokens)} tokens)</span>` : 'unavailable'}
          </td>
        </tr>
      </table>
    </div>
    <p class="muted">The estimate puts every result a clearing batch replaced back into each later request, priced as uncached input.</p>
    <h2>Steps</h2>
    <div class="table-wrap">
      <table data-steps>
        <tr>
          <th>step</th>
          <th>tools</th>
          <th class="num">tokens sent</th>
          <th class="num">cache write</th>
          <th class="num">cache read</th>
          <th class="num">cost</th>
          <th>context</th>
        </tr>
        ${status.steps.map(
          (s, i) =>
            html`<tr data-step="${s.step}">
              <td>${s.step}</td>
              <td>
                ${
                  (calls[i] ?? null) !== null
                    ? html`<ul class="tools">
                        ${(calls[i] ?? []).map((c) => html`<li><a href="#${callAnchor(c.id)}">${oneLine(c, currency)}</a></li>`)}
                      </ul>`
                    : s.tools.length
                      ? s.tools.join(', ')
                      : html`<span class="muted">reply</span>`
                }${calls[i]?.length === 0 ? html`<span class="muted">reply</span>` : ''}
              </td>
              <td class="num">${count(totalInputTokens(s.usage))}</td>
              <td class="num">${count(s.usage.cache_creation_input_tokens)}</td>
              <td class="num">${count(s.usage.cache_read_input_tokens)}</td>
              <td class="num">${usd(s.cost_usd)}</td>
              <td>${s.context_event ? html`<span class="event">${s.context_event}</span>` : ''}</td>
            </tr>`,
        )}
      </table>
    </div>
    ${status.handOff ? html`<p class="notice">Handed to a person at ${when(status.handOff.at)}: ${status.handOff.reason}</p>` : ''}`;
  return page(`Case ${status.ticketId}`, body, ctx.session);
}
