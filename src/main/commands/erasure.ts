import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Config } from '../../config';
import { eraseCustomer, erasureDepsOf } from '../../client/erasure';
import { closedCaseLine, openInvestigations } from '../../client/erasure-closing';
import { exportCustomer } from '../../client/subject-export';
import { parseCustomerId } from '../../memory/control';
import { customerKeysOf, openTranscriptLog } from '../../temporal/codec/body-codec';
import { connectClient } from '../../temporal/client';
import { codecFor } from '../../temporal/data-converter';
import { withDatabase } from '../database';
import { UsageError } from '../usage';

type Out = (line: string) => void;

function need(value: string | undefined, flag: string, example: string): string {
  if (value === undefined || !value.trim()) throw new UsageError(`${flag} is required, e.g. ${example}`);
  return value;
}

/**
 * `casework erase --customer <id> --by <name> [--yes]`: closes the customer's open
 * investigations first (holding reply, note, pending refund withdrawn), then deletes their
 * memory, destroys their data key and empties their parked deliveries, with an audit row.
 * Without --yes it only says what it would do, naming the cases it would close.
 */
export async function eraseCommand(args: string[], config: Config, out: Out): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { customer: { type: 'string' }, by: { type: 'string' }, yes: { type: 'boolean' } } });
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const customerId = parseCustomerId(need(values.customer, '--customer', 'casework erase --customer C-1001 --by alice --yes'));
  const by = need(values.by, '--by', 'casework erase --customer C-1001 --by alice --yes');
  return withDatabase(config, async (db) => {
    const { client, close } = await connectClient(config, { pool: db.app });
    try {
      if (!values.yes) {
        const open = await openInvestigations({ pool: db.app, client }, customerId);
        out(`This erases customer ${customerId} for good: their memory is deleted and their data key destroyed, so their transcripts and kept replies can never be read again.`);
        if (open.length) {
          out(
            `It first closes their ${open.length} open investigation(s): ${open.map((o) => o.workflowId).join(', ')} ` +
              '(the customer gets a holding reply, the team an internal note, a refund awaiting approval is withdrawn).',
          );
        }
        out('Run again with --yes to erase.');
        return 2;
      }
      const report = await eraseCustomer(erasureDepsOf(config, db.app, client), { customerId, by });
      for (const c of report.closed) out(`  closed ${closedCaseLine(c)}`);
      const d = report.deleted;
      out(
        `Erased customer ${customerId} on ${report.erasure.erasedAt.slice(0, 10)} (by ${by}): ${d.notes} notes, ${d.cases} cases, ${d.profile_fields} profile fields deleted; ` +
          `data key version(s) ${report.keyVersionsDestroyed.join(', ') || '(none: nothing was ever encrypted for them)'} destroyed across ${report.tickets} ticket(s); ` +
          `${report.parkedDeliveriesEmptied} parked deliveries emptied.`,
      );
      return 0;
    } finally {
      await close();
    }
  });
}

/** `casework export --customer <id> [--out <file>] [--by <name>]`: the subject-access document (JSON, schema casework.subject-access/v1). */
export async function exportCommand(args: string[], config: Config, out: Out): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { customer: { type: 'string' }, out: { type: 'string' }, by: { type: 'string' } } });
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const customerId = need(values.customer, '--customer', 'casework export --customer C-1001 --out c-1001.json');
  return withDatabase(config, async (db) => {
    const document = await exportCustomer({ pool: db.app, log: openTranscriptLog(db.app, codecFor(config)) }, { customerId, actor: values.by ?? 'export' });
    const text = JSON.stringify(document, null, 2);
    if (values.out) {
      writeFileSync(values.out, `${text}\n`, { mode: 0o600 });
      out(
        `wrote ${values.out}: ${document.notes.length} notes, ${document.cases.length} cases, ${document.refund_trail.length} refund requests, ${document.investigations.length} investigations`,
      );
    } else out(text);
    return 0;
  });
}

/** `casework keys rewrap`: re-wraps every customer data key under the newest master key (after a rotation), re-encrypting no data. */
export async function keysCommand(args: string[], config: Config, out: Out): Promise<number> {
  if (args.length !== 1 || args[0] !== 'rewrap') throw new UsageError('usage: casework keys rewrap   re-wrap customer data keys under the newest master key');
  return withDatabase(config, async (db) => {
    const codec = codecFor(config);
    const { rewrapped } = await customerKeysOf(db.app, codec).rewrapAll();
    out(`re-wrapped ${rewrapped} customer data key(s) under master key ${codec.currentKeyId}; older master keys may leave the ring once nothing else is encrypted under them`);
    return 0;
  });
}
