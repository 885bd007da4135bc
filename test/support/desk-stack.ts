import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { readStatus } from '../../src/client/investigations';
import { loadConfig } from '../../src/config';
import type { Database } from '../../src/db/pool';
import { startDeskStandin, type DeskStandin } from '../../src/dev/desk-standin';
import { startServer, type RunningServer } from '../../src/server/start';
import type { RequestLog } from '../../src/server/app';
import type { InvestigationStatus } from '../../src/schemas/investigation';
import { openTestDatabase } from './db';
import { scriptedModel, type ScriptedModel, type ScriptStep } from './scripted-model';
import { settle } from './scripted-run';
import { startTestWorker, type TestWorker } from './temporal';

// The whole desk loop for one test file: the Zendesk stand-in (a test double of Zendesk), a real
// worker posting to it with the scripted fake model, and the real HTTP server taking webhooks,
// all on the suite's Temporal dev server and a seeded database of the file's own.

/** Intercom's client secret and Freshdesk's shared token in these tests. */
export const INTERCOM_SECRET = 'intercom-client-secret-for-tests';
export const FRESHDESK_TOKEN = 'freshdesk-token-for-tests-0123456789';
/** Desk users mapped to the seeded customers. */
export const ZENDESK_REQUESTER = 8447388090494;
export const CUSTOMER = 'cust_dana';

/**
 * Where a test file's desk stand-in numbers its tickets: stand-ins of different test files share
 * one Temporal server, and a ticket's workflow id is its number, so their ids must not meet.
 */
export function firstTicketIdOfFile(): number {
  return 100_000 + Math.floor(Math.random() * 800_000) * 10;
}

/** A worker's settings for the Zendesk stand-in: its address, the agent's credentials and the webhook secret. */
export function zendeskEnv(standin: DeskStandin): Record<string, string> {
  return {
    CASEWORK_ZENDESK_BASE_URL: standin.url,
    CASEWORK_ZENDESK_EMAIL: standin.agent.email,
    CASEWORK_ZENDESK_API_TOKEN: standin.agent.apiToken,
    CASEWORK_ZENDESK_WEBHOOK_SECRET: standin.webhookSecret,
  };
}

/** What a test file gets: read inside tests. */
export interface DeskStack {
  db: Database;
  standin: DeskStandin;
  model: ScriptedModel;
  tw: TestWorker;
  server: RunningServer;
  logs: RequestLog[];
}

/**
 * Registers before/after hooks that start the stack and stop it. `env` adds worker settings;
 * `settings` adds investigation settings (CASEWORK_MAX_STEPS_PER_RUN, …) to the server, which
 * sends them with each webhook's event, and to the worker.
 */
export function deskStack(options: { env?: Record<string, string>; settings?: Record<string, string> } = {}): DeskStack {
  const stack = { logs: [] } as unknown as DeskStack;
  before(async () => {
    stack.standin = await startDeskStandin({ firstTicketId: firstTicketIdOfFile() });
    stack.db = await openTestDatabase({ seed: true });
    stack.model = scriptedModel();
    const zendesk = {
      ...zendeskEnv(stack.standin),
      CASEWORK_DESK_CUSTOMERS: `zendesk:${ZENDESK_REQUESTER}=${CUSTOMER},intercom:5d6a4c8e0e8a2b1c3d4e5f60=${CUSTOMER},freshdesk:priya@example.com=${CUSTOMER}`,
      CASEWORK_DESK_TIMEOUT_MS: '1000',
    };
    stack.tw = await startTestWorker({ pool: stack.db.app, model: stack.model, env: { CASEWORK_DESKS: 'zendesk', ...zendesk, ...options.settings, ...options.env } });
    // The server verifies all three desks' webhooks; it never calls their APIs (the worker does).
    const config = loadConfig({
      ...process.env,
      ...zendesk,
      ...options.settings,
      TEMPORAL_TASK_QUEUE: stack.tw.taskQueue,
      CASEWORK_HTTP_OPEN: 'true',
      CASEWORK_DESKS: 'zendesk,intercom,freshdesk',
      CASEWORK_INTERCOM_CLIENT_SECRET: INTERCOM_SECRET,
      CASEWORK_INTERCOM_BASE_URL: 'http://127.0.0.1:9',
      CASEWORK_INTERCOM_ACCESS_TOKEN: 'unused',
      CASEWORK_INTERCOM_ADMIN_ID: '1',
      CASEWORK_FRESHDESK_WEBHOOK_TOKEN: FRESHDESK_TOKEN,
      CASEWORK_FRESHDESK_BASE_URL: 'http://127.0.0.1:9',
      CASEWORK_FRESHDESK_API_KEY: 'unused',
    });
    stack.server = await startServer({ client: stack.tw.client, pool: stack.db.app, config, log: (entry) => stack.logs.push(entry) }, 0);
  });
  after(async () => {
    await stack.server?.close(0);
    await stack.tw?.stop();
    await stack.db?.close();
    await stack.standin?.close();
  });
  return stack;
}

/** Sends the stand-in's signed webhook for a comment to the server; it must be accepted (202). */
export async function postZendeskWebhook(stack: DeskStack, ticketId: number, commentId: number): Promise<void> {
  const { body, headers } = stack.standin.commentWebhook(ticketId, commentId);
  const res = await fetch(`${stack.server.url}/webhooks/zendesk`, { method: 'POST', headers, body });
  assert.equal(res.status, 202, await res.text());
}

/** Opens a Zendesk ticket on the stand-in, sends its signed webhook to the server, and waits for the answer. */
export async function openZendeskCase(stack: DeskStack, text: string, script: ScriptStep[]): Promise<{ ticketId: number; workflowId: string; status: InvestigationStatus }> {
  const { ticketId, commentId } = stack.standin.createTicket({ requesterId: ZENDESK_REQUESTER, subject: 'Order', body: text });
  const workflowId = `investigation-zendesk-${ticketId}`;
  stack.model.script(workflowId, script);
  await postZendeskWebhook(stack, ticketId, commentId);
  return { ticketId, workflowId, status: await settle(stack.tw, stack.model, workflowId) };
}

/** Waits until the run's desk outbox is empty with at least `done` posts made or refused. */
export async function postsSettled(stack: DeskStack, workflowId: string, done: number): Promise<InvestigationStatus> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const status = await readStatus(stack.tw.client, workflowId);
    const outbox = status.desk;
    if (outbox && outbox.pending.length === 0 && outbox.posted + outbox.failed.length >= done) return status;
    if (Date.now() > deadline) throw new Error(`${workflowId}: desk posts did not settle: ${JSON.stringify(outbox)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
