import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import type { Config } from '../../config';
import { BadInputError } from '../../errors';
import { mirrorDemoPayments, startStandinPayments } from './stand-in-payments';
import { startStandinMcp, type StandinMcp } from './stand-in-mcp';
import { money, stepTable, totalsLine, workflowUrl } from '../../client/format';
import { decideRefund, deliverAndWait, readStatus, waitUntilSettled } from '../../client/investigations';
import { startLocalStack } from '../env/stack';
import { formatThread, startDeskStandin, type DeskStandin } from '../desk-standin';
import { DEMO_ZENDESK_ORDER_FIELD_ID, seedZendeskHistory } from '../desk-standin-demo';
import { jsonLog, startServer, type RunningServer } from '../../server/start';
import { showMemory } from '../../memory/control';
import { parseTicketEvent, type TicketEvent } from '../../schemas/event';
import type { InvestigationStatus } from '../../schemas/investigation';
import { investigationSettings } from '../../settings';

type Out = (line: string) => void;

/** The example events the demo sends, in examples/events. */
export const EXAMPLES_DIR = resolve(__dirname, '../../../examples/events');

/** An example event with a ticket id unique to this run, so a reused dev server never mixes runs. */
export function exampleEvent(name: string, runTag: string, overrides: Partial<TicketEvent> = {}): TicketEvent {
  const raw = JSON.parse(readFileSync(resolve(EXAMPLES_DIR, `${name}.json`), 'utf8')) as TicketEvent;
  return parseTicketEvent({ ...raw, ticketId: `${raw.ticketId}-${runTag}`, eventId: `${raw.eventId}-${runTag}`, ...overrides });
}

/** Prints each new step as the workflow records it. */
function stepPrinter(out: Out) {
  let printed = 0;
  let headerShown = false;
  return (status: InvestigationStatus) => {
    const table = stepTable(status.steps, { toolsWidth: 44 });
    if (!headerShown && status.steps.length) {
      out(`    ${table[0]}`);
      out(`    ${table[1]}`);
      headerShown = true;
    }
    for (const row of table.slice(2 + printed)) out(`    ${row}`);
    printed = status.steps.length;
  };
}

interface Conversation {
  client: Client;
  pool: Pool;
  config: Config;
  out: Out;
}

function send(c: Conversation, event: TicketEvent, print?: (s: InvestigationStatus) => void): Promise<InvestigationStatus> {
  if (event.message) c.out(`  -> ${event.type} from ${event.customerId}: "${event.message}"`);
  return deliverAndWait(c.client, c.pool, event, { taskQueue: c.config.TEMPORAL_TASK_QUEUE, settings: investigationSettings(c.config), onStatus: print, pollMs: 100 });
}

async function approvePending(c: Conversation, status: InvestigationStatus, approver: string, print: (s: InvestigationStatus) => void): Promise<InvestigationStatus> {
  const p = status.pendingApproval!;
  c.out('');
  c.out(`  PAUSED: refund ${p.request_id} of ${money(p.amount_cents)} on order ${p.order_id} awaits a human.`);
  c.out(`    reason: ${p.reason}`);
  c.out(`    the workflow waits durably (reminder after ${c.config.CASEWORK_APPROVAL_REMINDER_HOURS} h, auto-deny after ${c.config.CASEWORK_APPROVAL_TIMEOUT_HOURS} h).`);
  c.out(`    same as: casework approve ${status.workflowId} --request ${p.request_id} --approver ${approver}`);
  await decideRefund(c.client, status.workflowId, { requestId: p.request_id, decision: 'approved', approver, reason: 'demo: evidence supports the claim' });
  c.out(`  APPROVED by ${approver}; the investigation resumes.`);
  c.out('');
  return waitUntilSettled(c.client, status.workflowId, { afterStep: status.step, onStatus: print, pollMs: 100 });
}

function printReply(c: Conversation, status: InvestigationStatus): void {
  c.out('');
  c.out(`  ${totalsLine(status)}`);
  c.out('  reply to the customer:');
  for (const line of (status.lastReply ?? '(none)').split('\n')) c.out(`    | ${line}`);
  c.out(`  web UI: ${workflowUrl(c.config.TEMPORAL_UI_URL, c.config.TEMPORAL_NAMESPACE, status.workflowId)}`);
}

/** Dana's user id on the Zendesk stand-in (mapped to cust_dana through CASEWORK_DESK_CUSTOMERS). */
const DANA_ZENDESK_ID = 7310042;

/** Waits until the investigation's desk outbox has nothing left to post. */
async function deskPostsDone(c: Conversation, workflowId: string): Promise<void> {
  await waitUntilSettled(c.client, workflowId, { pollMs: 100 });
  for (let tries = 0; tries < 300; tries++) {
    const status = await readStatus(c.client, workflowId);
    if (!status.desk?.pending.length) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The dispute as a support desk sends it: Dana writes on a ticket in the Zendesk stand-in, its
 * signed webhook reaches casework's HTTP server, and casework's replies and internal notes go
 * back onto the ticket, printed as the customer and the team see them.
 */
async function investigateFromDesk(c: Conversation, desk: { standin: DeskStandin; server: RunningServer }, message: string, approver: string): Promise<InvestigationStatus> {
  const { ticketId, commentId } = desk.standin.createTicket({ requesterId: DANA_ZENDESK_ID, requesterName: 'Dana Whitfield', subject: 'Order 5102 never arrived', body: message });
  c.out(`  -> Dana writes on Zendesk ticket ${ticketId} (the stand-in); its signed webhook goes to POST /webhooks/zendesk`);
  const answered = await desk.standin.sendCommentWebhook(`${desk.server.url}/webhooks/zendesk`, ticketId, commentId);
  c.out(`  <- casework answered ${answered}; the investigation runs asynchronously`);
  const workflowId = `investigation-zendesk-${ticketId}`;
  const print = stepPrinter(c.out);
  let status = await waitUntilSettled(c.client, workflowId, { onStatus: print, pollMs: 100 });
  while (status.status === 'awaiting_approval') {
    await deskPostsDone(c, workflowId);
    status = await approvePending(c, status, approver, print);
  }
  await deskPostsDone(c, workflowId);
  status = await readStatus(c.client, workflowId);
  c.out('');
  c.out(`  ${totalsLine(status)}`);
  for (const line of formatThread(desk.standin, ticketId).split('\n')) c.out(`  ${line}`);
  c.out(`  web UI: ${workflowUrl(c.config.TEMPORAL_UI_URL, c.config.TEMPORAL_NAMESPACE, workflowId)}`);
  return status;
}

/** Runs one investigation to its reply, approving any refund it asks for. */
async function investigate(c: Conversation, event: TicketEvent, approver: string): Promise<InvestigationStatus> {
  const print = stepPrinter(c.out);
  let status = await send(c, event, print);
  while (status.status === 'awaiting_approval') status = await approvePending(c, status, approver, print);
  printReply(c, status);
  return status;
}

function closeTicket(c: Conversation, event: TicketEvent): Promise<InvestigationStatus> {
  return send(c, { ...event, type: 'ticket.closed', eventId: `${event.eventId}-closed`, message: '' });
}

/**
 * With the stand-ins, the shop's MCP tools: Dana asks about order 5102's warranty (a read-only
 * MCP tool, called at once) and for store credit (a money-moving one: filed for approval, not
 * called on the model's word; called once after a person approves it). Prints what the MCP
 * stand-in saw at each point.
 */
async function investigateWithShopTools(c: Conversation, mcp: StandinMcp, runTag: string): Promise<InvestigationStatus> {
  c.out('');
  c.out("4. The shop's own MCP server: Dana asks whether order 5102 is under warranty, and for store credit meanwhile");
  const event = exampleEvent('dana-5102', runTag, {
    ticketId: `T-MCP-${runTag}`,
    eventId: `evt-mcp-${runTag}`,
    message: 'Is order 5102 still under warranty? While the warranty claim is looked at, could I have some store credit?',
  });
  const seen = mcp.standin.state;
  const print = stepPrinter(c.out);
  let status = await send(c, event, print);
  c.out(`  MCP stand-in so far: lookup_warranty answered ${seen.lookups} time(s); issue_store_credit called ${seen.invocations} time(s), ${seen.credits.length} credit(s) issued`);
  if (status.status === 'awaiting_approval' && status.pendingApproval?.mcp) {
    const p = status.pendingApproval;
    c.out(`  -> ${p.mcp!.tool} moves money, so casework did not call it on the model's word: request ${p.request_id} waits for a person (${seen.invocations} calls made)`);
    status = await approvePending(c, status, 'support-lead', print);
    c.out(
      `  after the approval: issue_store_credit called ${seen.invocations} time(s), ${seen.credits.length} credit(s) issued (${seen.credits.map((x) => `${x.credit_id} of ${money(x.amount_cents)}`).join(', ')})`,
    );
  }
  printReply(c, status);
  return status;
}

/**
 * `npm run demo`: starts the dev server (web UI on 8233) and an in-memory embedded Postgres,
 * runs the delivered-but-missing dispute to its refund request, approves it, prints the reply
 * and the web-UI link; then Priya's two conversations, the second opening "same problem as
 * last time". With `keepRunning`, waits for Ctrl-C so the web UI stays up.
 */
export async function runDemo(
  config: Config,
  out: Out,
  options: { keepRunning?: boolean; shop?: DemoShop } = {},
): Promise<{ dispute: InvestigationStatus; priya: InvestigationStatus[]; mcp?: InvestigationStatus }> {
  const started = Date.now();
  // With the stand-ins, the payment provider is the Stripe stand-in, filled from the demo shop's records once they are seeded.
  const payments = options.shop === 'stand-in' ? await startStandinPayments() : undefined;
  // And the shop's own MCP server is the MCP stand-in, connected as a worker connects at start.
  const mcp =
    options.shop === 'stand-in'
      ? await startStandinMcp().catch(async (error: unknown) => {
          await payments?.standin.close();
          throw error;
        })
      : undefined;
  config = { ...config, ...payments?.config, ...mcp?.config };
  out('casework demo: starting the Temporal dev server, an embedded Postgres and a worker...');
  // The worker's info logs would drown the step table; CASEWORK_LOG_LEVEL=info shows them.
  const quiet = { ...config, CASEWORK_LOG_LEVEL: process.env.CASEWORK_LOG_LEVEL ? config.CASEWORK_LOG_LEVEL : ('warn' as const) };
  const runTag = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  // Ticket ids from the time, so a reused dev server never mixes this run's desk tickets with an earlier one's.
  const standin = await startDeskStandin({ firstTicketId: Number(runTag.slice(6)) });
  const deskConfig: Config = {
    ...quiet,
    CASEWORK_DESKS: 'zendesk',
    CASEWORK_ZENDESK_BASE_URL: standin.url,
    CASEWORK_ZENDESK_EMAIL: standin.agent.email,
    CASEWORK_ZENDESK_API_TOKEN: standin.agent.apiToken,
    CASEWORK_ZENDESK_WEBHOOK_SECRET: standin.webhookSecret,
    CASEWORK_DESK_CUSTOMERS: `zendesk:${DANA_ZENDESK_ID}=cust_dana`,
    CASEWORK_ZENDESK_ORDER_FIELD_ID: String(DEMO_ZENDESK_ORDER_FIELD_ID),
  };
  // Dana's earlier tickets live on the desk, as a team's do: the dispute reads them from there.
  seedZendeskHistory(standin, DANA_ZENDESK_ID, 'cust_dana', 'Dana Whitfield');
  const stack = await startLocalStack(deskConfig, { inMemoryDb: true, ...(mcp ? { mcp: mcp.tools } : {}) }).catch(async (error: unknown) => {
    await standin.close();
    await payments?.standin.close();
    await mcp?.close();
    throw error;
  });
  let server: RunningServer | undefined;
  try {
    server = await startServer({ client: stack.client, pool: stack.db.app, config: { ...deskConfig, CASEWORK_HTTP_OPEN: 'true' }, log: jsonLog(deskConfig, out) }, 0);
    out(`  Temporal ${stack.config.TEMPORAL_ADDRESS} (web UI ${stack.server.uiUrl}${stack.server.startedHere ? '' : ', already running'}); Postgres: embedded, in memory`);
    out(`  model: ${stack.model.label}`);
    if (payments) {
      const copied = await mirrorDemoPayments(stack.db.admin, payments.standin);
      out(
        `  payments: a Stripe stand-in (a test double, not Stripe) at ${payments.standin.url}, holding the demo shop's ${copied.charges} captured charges and ${copied.refunds} refunds`,
      );
    }
    if (mcp) out(`  MCP: the shop's MCP server is a stand-in (a test double) at ${mcp.standin.url}: ${mcp.tools.offers.tools.map((t) => `${t.name} (${t.kind})`).join(', ')}`);
    const c: Conversation = { client: stack.client, pool: stack.db.app, config, out };
    out(`  desk: a Zendesk stand-in (a test double, not Zendesk) at ${standin.url}; casework's HTTP server at ${server.url}`);

    out('');
    out('1. The dispute, from the support desk: a parcel marked delivered that never arrived (Dana, order 5102)');
    const dispute = await investigateFromDesk(c, { standin, server }, exampleEvent('dana-5102', runTag).message, 'support-lead');

    out('');
    out('2. Priya, conversation one: order 4471 left at the wrong building');
    const first = exampleEvent('priya-1', runTag);
    const one = await investigate(c, first, 'support-lead');
    const closed = await closeTicket(c, first);
    out(`  ticket closed (${closed.status}); the post-run pipeline recorded the case in her memory.`);
    const memory = await showMemory(stack.db.app, first.customerId, { actor: 'demo' });
    out(
      `  her memory now: ${memory.notes.length} notes, ${memory.cases.length} cases` +
        (memory.profile.delivery_instructions ? `; delivery instructions: "${memory.profile.delivery_instructions.value}"` : ''),
    );

    out('');
    out('3. Priya, conversation two, a new ticket: "Same problem as last time..."');
    const two = await investigate(c, exampleEvent('priya-2', runTag), 'support-lead');
    const shopTools = mcp ? await investigateWithShopTools(c, mcp, runTag) : undefined;

    out('');
    out(`Done in ${((Date.now() - started) / 1000).toFixed(1)} s. Filter the web UI's workflow list with: CaseworkStatus="waiting_for_customer"`);
    out(`  (or CaseworkCustomerId="${first.customerId}"); each run's Queries tab answers "status".`);
    if (options.keepRunning && stack.server.startedHere) {
      out('The dev server and worker keep running so the links work. Press Ctrl-C to stop.');
      await new Promise<void>((resolvePromise) => {
        process.once('SIGINT', resolvePromise);
        process.once('SIGTERM', resolvePromise);
      });
    }
    return { dispute, priya: [one, two], ...(shopTools ? { mcp: shopTools } : {}) };
  } finally {
    await server?.close(0);
    await stack.stop();
    await standin.close();
    await payments?.standin.close();
    await mcp?.close();
  }
}

/** Where the demo's shop systems are: the demo shop itself, or stand-ins of the providers' APIs (`--shop stand-in`). */
export type DemoShop = 'demo' | 'stand-in';

/** Reads `--shop demo|stand-in` from the demo's arguments; anything else is a BadInputError naming it. */
export function demoShopOf(args: readonly string[]): DemoShop {
  const at = args.findIndex((a) => a === '--shop' || a.startsWith('--shop='));
  if (at === -1) return 'demo';
  const value = args[at]!.includes('=') ? args[at]!.split('=')[1] : args[at + 1];
  if (value === 'demo' || value === 'stand-in') return value;
  throw new BadInputError(`--shop: "${value ?? ''}" is not one of demo, stand-in`);
}
