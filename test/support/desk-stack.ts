import { after, before } from 'node:test';
import { loadConfig } from '../../src/config';
import type { Database } from '../../src/db/pool';
import { startDeskStandin, type DeskStandin } from '../../src/dev/desk-standin';
import { startServer, type RunningServer } from '../../src/server/start';
import type { RequestLog } from '../../src/server/app';
import { openTestDatabase } from './db';
import { scriptedModel, type ScriptedModel } from './scripted-model';
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
    // Stand-ins of different test files share one Temporal server: their ticket ids must not meet.
    stack.standin = await startDeskStandin({ firstTicketId: 100_000 + Math.floor(Math.random() * 800_000) * 10 });
    stack.db = await openTestDatabase({ seed: true });
    stack.model = scriptedModel();
    const zendesk = {
      CASEWORK_ZENDESK_BASE_URL: stack.standin.url,
      CASEWORK_ZENDESK_EMAIL: stack.standin.agent.email,
      CASEWORK_ZENDESK_API_TOKEN: stack.standin.agent.apiToken,
      CASEWORK_ZENDESK_WEBHOOK_SECRET: stack.standin.webhookSecret,
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
