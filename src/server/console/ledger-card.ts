import type { Pool } from 'pg';
import { capturedOf, ledgerProblem, refundedOf, remainingOf, type OrderLedger } from '../../context/ledger';
import { readOrderLedger } from '../../db/ledger';
import { withCustomer } from '../../db/pool';
import type { RefundRequest } from '../../schemas/investigation';
import { money, when } from './format';
import { html, type Html } from './html';

// The order's money ledger on an approval card: what was captured (per charge), what was
// refunded (per refund, with the charge it reversed), and what other cases have pending, in
// the order's currency, so an approver sees the other ticket before approving the same money
// twice. Read live from Postgres when the page is drawn; the request's own snapshot otherwise.

/** The order's ledger now, or undefined when Postgres cannot say (the card then shows the snapshot the case holds). */
export async function liveLedger(pool: Pool, customerId: string, orderId: string): Promise<OrderLedger | undefined> {
  return withCustomer(pool, customerId, (client) => readOrderLedger(client, customerId, orderId)).catch(() => undefined);
}

/** The ledger card for a pending request. */
export function ledgerCard(ledger: OrderLedger, request: RefundRequest, live: boolean): Html {
  const m = (cents: number) => money(cents, ledger.currency);
  const others = ledger.pending.filter((p) => p.request_id !== request.request_id);
  const problem = request.kind
    ? ledgerProblem(ledger, { request_id: request.request_id, amount_cents: request.amount_cents, kind: request.kind, charge_id: request.charge_id ?? null })
    : null;
  return html`<section class="ledger" data-ledger="${ledger.order_id}" aria-label="Order ledger">
    <h3>Order ${ledger.order_id} ledger <span class="muted">(${ledger.currency}${live ? ', now' : ', when requested'})</span></h3>
    ${problem ? html`<p class="flash error" role="alert" data-ledger-problem>Approving this will be refused: ${problem}.</p>` : ''}
    ${request.overlaps?.length ? html`<p class="notice" data-overlaps>This request overlaps ${request.overlaps.join(', ')}, pending in another case for the same money.</p>` : ''}
    <div class="facts">
      <div><span>Order total</span>${m(ledger.total_cents)}</div>
      <div><span>Captured</span>${m(capturedOf(ledger))} in ${String(ledger.charges.length)} charge${ledger.charges.length === 1 ? '' : 's'}</div>
      <div><span>Refunded</span>${m(refundedOf(ledger))}</div>
      <div><span>Remaining</span>${m(remainingOf(ledger))}</div>
      <div><span>This request</span>${m(request.amount_cents)} ${request.kind ? request.kind.replace('_', ' ') : ''}${request.charge_id ? ` of ${request.charge_id}` : ''}</div>
    </div>
    <table>
      <thead>
        <tr>
          <th>What</th>
          <th>Amount</th>
          <th>Charge</th>
          <th>When / where</th>
        </tr>
      </thead>
      <tbody>
        ${ledger.charges.map(
          (c) =>
            html`<tr>
              <td>Charge</td>
              <td>${m(c.amount_cents)}</td>
              <td>${c.charge_id}</td>
              <td>${when(c.at)}</td>
            </tr>`,
        )}
        ${ledger.refunds.map(
          (r) =>
            html`<tr>
              <td>Refund (${r.kind.replace('_', ' ')})</td>
              <td>${m(r.amount_cents)}</td>
              <td>${r.charge_id ?? 'the order'}</td>
              <td>${when(r.at)}${r.request_id ? ` · request ${r.request_id}` : ''}</td>
            </tr>`,
        )}
        ${others.map(
          (p) =>
            html`<tr data-pending-elsewhere>
              <td>Pending in ticket ${p.ticket_id}</td>
              <td>${m(p.amount_cents)}</td>
              <td>${p.charge_id ?? 'the order'}</td>
              <td>request ${p.request_id} (${p.status.replace('_', ' ')})</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}
