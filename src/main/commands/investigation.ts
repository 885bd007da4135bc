import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Config } from '../../config';
import { InvalidEventError, parseTicketEvent } from '../../schemas/event';
import { investigationSettings } from '../../settings';
import { connectClient } from '../../temporal/client';
import { describeStatus } from '../../client/format';
import { readCaseStatus } from '../../client/case-status';
import { decideRefund, deliverAndWait, deliverEvent } from '../../client/investigations';
import { withDatabase } from '../database';
import { onlyPositional, UsageError } from '../usage';

type Out = (line: string) => void;

/** How long `casework approve|deny` waits for a worker to run the decision's validator before saying none answered. */
const DECISION_TIMEOUT_MS = 30_000;

function readEventFile(path: string): unknown {
  let bytes: Buffer;
  try {
    bytes = path === '-' ? readFileSync(0) : readFileSync(path);
  } catch (error) {
    throw new UsageError(`cannot read event file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let text: string;
  try {
    // As POST /events does: bytes that are not UTF-8 are refused, never replaced.
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new InvalidEventError(['(event): not valid UTF-8']);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidEventError([`(event): not valid JSON (${(error as Error).message})`]);
  }
}

/** `casework ticket <event.json|-> [--wait] [--json]`: start the investigation or signal the running one. */
export async function ticketCommand(args: string[], config: Config, out: Out): Promise<number> {
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { wait: { type: 'boolean' }, json: { type: 'boolean' } } });
  const file = onlyPositional(positionals, 'ticket needs one event file (or - for stdin)');
  // Validate before connecting: a malformed event starts nothing.
  const event = parseTicketEvent(readEventFile(file));
  // The gate (ticket owners, events seen) lives in Postgres: it decides before Temporal is asked.
  return withDatabase(config, async (db) => {
    const { client, close } = await connectClient(config, { pool: db.app });
    try {
      const options = { taskQueue: config.TEMPORAL_TASK_QUEUE, settings: investigationSettings(config) };
      if (!values.wait) {
        const delivered = await deliverEvent(client, db.app, event, options);
        const said = delivered.duplicate ? 'was already delivered to' : 'delivered to';
        out(values.json ? JSON.stringify(delivered) : `${event.type} ${event.eventId} ${said} ${delivered.workflowId}`);
        return 0;
      }
      const status = await deliverAndWait(client, db.app, event, options);
      if (values.json) out(JSON.stringify(status, null, 2));
      else describeStatus(status, { uiUrl: config.TEMPORAL_UI_URL, namespace: config.TEMPORAL_NAMESPACE, steps: true }).forEach((l) => out(l));
      return 0;
    } finally {
      await close();
    }
  });
}

/** `casework status <workflowId> [--json]`. */
export async function statusCommand(args: string[], config: Config, out: Out): Promise<number> {
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' }, steps: { type: 'boolean' } } });
  const target = onlyPositional(positionals, 'status needs one workflow id, e.g. investigation-T-1001');
  // The database holds the payloads stored by reference, which the answer may need.
  return withDatabase(config, async (db) => {
    const { client, close } = await connectClient(config, { pool: db.app });
    try {
      const status = await readCaseStatus(client, target);
      if (values.json) out(JSON.stringify(status, null, 2));
      else describeStatus(status, { uiUrl: config.TEMPORAL_UI_URL, namespace: config.TEMPORAL_NAMESPACE, steps: values.steps }).forEach((l) => out(l));
      if (status.brokenRun) {
        out(`the investigation's run is ${status.brokenRun}: that is a bug; its next event starts a run that carries the transcript`);
        return 1;
      }
      return 0;
    } finally {
      await close();
    }
  });
}

/** `casework approve|deny <workflowId> --request <id> --approver <name> [--reason <text>]`. */
export async function decideCommand(decision: 'approved' | 'denied', args: string[], config: Config, out: Out): Promise<number> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: { request: { type: 'string' }, approver: { type: 'string' }, reason: { type: 'string' }, json: { type: 'boolean' } },
  });
  const target = onlyPositional(positionals, `${decision === 'approved' ? 'approve' : 'deny'} needs one workflow id`);
  if (!values.request) throw new UsageError('--request <requestId> is required (see `casework status <workflowId>`)');
  if (!values.approver) throw new UsageError('--approver <name> is required');
  const { request, approver } = values;
  return withDatabase(config, async (db) => {
    const { client, close } = await connectClient(config, { pool: db.app });
    try {
      const result = await decideRefund(
        client,
        target,
        { requestId: request, decision, approver, ...(values.reason ? { reason: values.reason } : {}) },
        { timeoutMs: DECISION_TIMEOUT_MS },
      );
      out(values.json ? JSON.stringify(result) : `refund ${result.requestId} ${result.decision} by ${approver}; the investigation resumes`);
      return 0;
    } finally {
      await close();
    }
  });
}
