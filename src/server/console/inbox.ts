import type { InvestigationSettings } from '../../schemas/investigation';
import { mayDecide } from '../auth';
import type { CaseView } from './cases';
import { duration, money, when } from './format';
import { html, type Html } from './html';
import { csrfInput, mayOpenMemory, page } from './layout';
import type { CustomerRefs } from './refs';
import type { Session } from './session';
import { callArgs, callSentence, citedCalls, toolCallsByMessage } from './tool-calls';
import type { OrderLedger } from '../../schemas/ledger';
import { ledgerCard } from './ledger-card';

// The approvals inbox: every refund waiting for a person, oldest first, with what the agent
// found, and approve / deny forms that go through the same validated update as the CLI.

/** What the inbox needs besides the cases. */
export interface InboxContext {
  session: Session;
  settings: Pick<InvestigationSettings, 'approvalReminderMs' | 'approvalTimeoutMs'>;
  refs: CustomerRefs;
  now: number;
  /** How often the open page asks which requests are still pending (CASEWORK_CONSOLE_POLL_SECONDS). */
  pollMs: number;
  /** Each pending case's order ledger read now, by workflow id; a case missing here shows the snapshot it holds. */
  ledgers?: ReadonlyMap<string, OrderLedger>;
  /** Running cases handed to a person (a failed refund, an outage, a held reply), listed under the approvals. */
  withPerson?: readonly CaseView[];
}

/** The cases waiting for a person other than for a refund decision: why, since when, and a link to each. */
function withPersonList(views: readonly CaseView[] | undefined): Html {
  if (!views?.length) return html``;
  return html` <section data-with-person>
    <h2>Handed to a person <span class="muted">(${views.length})</span></h2>
    <ul>
      ${views.map(
        (v) =>
          html`<li data-workflow-id="${v.workflowId}">
            <a href="/console/cases/${v.workflowId}">Ticket ${v.status.ticketId}</a> ·
            ${v.status.customerId}${v.status.handOff ? html` · since ${when(v.status.handOff.at)}: ${v.status.handOff.reason}` : ''}
          </li>`,
      )}
    </ul>
  </section>`;
}

function evidence(view: CaseView): Html {
  const notes = view.status.caseNotes;
  const found = view.status.agentNotes.found;
  const facts = [...(notes?.facts_established ?? []), ...found];
  const calls = view.transcript ? citedCalls(toolCallsByMessage(view.transcript).flat(), facts) : [];
  const currency = view.status.pendingApproval?.currency;
  return html` <h3>Evidence</h3>
    ${notes?.customer_problem ? html`<p><strong>Problem:</strong> ${notes.customer_problem}</p>` : ''}
    ${notes?.customer_wants ? html`<p><strong>Customer wants:</strong> ${notes.customer_wants}</p>` : ''}
    ${
      facts.length
        ? html`<ul>
            ${facts.map((f) => html`<li>${f}</li>`)}
          </ul>`
        : html`<p class="muted">No case notes yet.</p>`
    }
    ${notes?.already_offered.length ? html`<p><strong>Already offered:</strong> ${notes.already_offered.join('; ')}</p>` : ''}
    ${
      calls.length
        ? html`<p><strong>Tool results the agent used</strong></p>
            ${calls.map(
              (c) =>
                html`<details data-evidence>
                  <summary><code>${c.name}(${callArgs(c.input)})</code>: ${callSentence(c, currency)}</summary>
                  <pre>${c.result}</pre>
                </details>`,
            )}`
        : ''
    }`;
}

function ledgerOf(view: CaseView, ctx: InboxContext): Html {
  const request = view.status.pendingApproval;
  const live = ctx.ledgers?.get(view.workflowId);
  const ledger = live ?? request?.ledger;
  return request && ledger ? ledgerCard(ledger, request, Boolean(live)) : html``;
}

function card(view: CaseView, ctx: InboxContext): Html {
  const request = view.status.pendingApproval;
  if (!request) return html``;
  const requested = Date.parse(request.requested_at);
  const remindAt = requested + ctx.settings.approvalReminderMs;
  const denyAt = requested + ctx.settings.approvalTimeoutMs;
  const canDecide = mayDecide(ctx.session.principal);
  const formId = `decide-${request.request_id}`;
  return html` <article class="card" data-request-id="${request.request_id}" aria-labelledby="${formId}-title">
    <h2 id="${formId}-title">${money(request.amount_cents, request.currency)} refund on order ${request.order_id} · ticket ${view.status.ticketId}</h2>
    <p class="notice hidden" data-gone-note>Someone else decided this request. Reload the inbox.</p>
    <div class="facts">
      <div><span>Customer</span>${view.status.customerId}</div>
      <div><span>Order</span>${request.order_id}</div>
      <div><span>Amount</span>${money(request.amount_cents, request.currency)}</div>
      <div><span>Waiting for</span>${duration(ctx.now - requested)}</div>
      <div><span>Reminder</span>${request.reminded ? 'sent' : when(new Date(remindAt).toISOString())}</div>
      <div><span>Auto-denied at</span>${when(new Date(denyAt).toISOString())}</div>
      <div><span>Who may approve</span>${request.approvers.map((a) => `${a.name} (up to ${money(a.limit_cents, request.currency)})`).join(', ') || 'anyone listed'}</div>
    </div>
    <p><strong>Reason:</strong> ${request.reason}</p>
    ${ledgerOf(view, ctx)} ${evidence(view)}
    <p>
      <a href="/console/cases/${view.workflowId}">Timeline of this case</a>
      ${mayOpenMemory(ctx.session) ? html` · <a href="/console/customers/${ctx.refs.refOf(view.status.customerId)}">Customer's memory</a>` : ''}
    </p>
    ${
      canDecide
        ? html`<form method="post" action="/console/inbox/decide" id="${formId}">
            ${csrfInput(ctx.session)}
            <input type="hidden" name="workflowId" value="${view.workflowId}" />
            <input type="hidden" name="requestId" value="${request.request_id}" />
            <label for="${formId}-reason">Reason (required to deny)</label>
            <textarea id="${formId}-reason" name="reason" maxlength="2000"></textarea>
            <div class="actions">
              <button class="approve" type="submit" name="decision" value="approved">Approve ${money(request.amount_cents, request.currency)}</button>
              <button class="deny" type="submit" name="decision" value="denied">Deny</button>
            </div>
          </form>`
        : html`<p class="muted">Your key reads cases; deciding refunds needs an approver grant.</p>`
    }
  </article>`;
}

/** The inbox page. */
export function inboxPage(cases: readonly CaseView[], ctx: InboxContext): string {
  const body = html` <section data-inbox data-poll-ms="${ctx.pollMs}">
      <h1>Refunds awaiting approval <span class="muted">(${cases.length})</span></h1>
      <p class="notice hidden" data-new-requests role="status"></p>
      ${cases.length ? cases.map((c) => card(c, ctx)) : html`<p class="card">Nothing is waiting for a decision.</p>`}
    </section>
    ${withPersonList(ctx.withPerson)}`;
  return page('Approvals', body, ctx.session);
}
