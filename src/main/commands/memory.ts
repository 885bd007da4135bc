import { parseArgs } from 'node:util';
import type { Pool } from 'pg';
import type { Config } from '../../config';
import { exitCodeOf } from '../../errors';
import { withDatabase } from '../database';
import { UsageError } from '../usage';
import { dayOf } from '../../memory/dates';
import { correctNote, forgetMemory, showMemory, type CustomerMemory } from '../../memory/control';
import { PROFILE_FIELDS, PROFILE_LABELS } from '../../memory/classify';

/** `casework memory …` usage, shown on a usage error. */
export const MEMORY_USAGE = [
  'usage: casework memory show    --customer <id> [--json]',
  '       casework memory correct --customer <id> --note <noteId> --text <text> [--actor <name>]',
  '       casework memory forget  --customer <id> [--note <noteId>] [--actor <name>]',
  '       casework memory reindex [--customer <id>]   embed what is stored (again, after a model change)',
].join('\n');

/** Exit code of a command that did what it was asked. */
const DONE = 0;

function describeMemory(memory: CustomerMemory): string[] {
  const lines = [`Memory for customer ${memory.customer_id}`];
  const fields = PROFILE_FIELDS.filter((f) => memory.profile[f]);
  lines.push(fields.length ? 'Profile:' : 'Profile: (empty)');
  for (const field of fields) {
    const entry = memory.profile[field]!;
    lines.push(`  ${PROFILE_LABELS[field]}: ${entry.value}  (note ${entry.note_id}, noted ${dayOf(entry.written_at)}, expires ${dayOf(entry.expires_at)})`);
  }
  lines.push(memory.notes.length ? `Notes (${memory.notes.length}):` : 'Notes: (none)');
  for (const n of memory.notes) {
    const due = n.due_on ? `, due ${n.due_on}` : '';
    const kind = n.kind === 'customer_claim' ? 'customer claim' : n.kind;
    lines.push(`  note ${n.note_id}  ${dayOf(n.written_at)}  ${kind}, ${n.status}${due}: ${n.text}  (from ${n.source_run}, expires ${dayOf(n.expires_at)})`);
  }
  lines.push(memory.cases.length ? `Cases (${memory.cases.length}):` : 'Cases: (none)');
  for (const c of memory.cases) {
    const orders = c.order_ids.length ? `order ${c.order_ids.join(', order ')}: ` : '';
    lines.push(`  ${c.closed_on}  ${orders}${c.problem}${c.resolution ? `; resolution: ${c.resolution}` : ''}  (from ${c.source_run})`);
  }
  return lines;
}

function need(value: string | undefined, flag: string): string {
  if (value === undefined) throw new UsageError(`${flag} is required`);
  return value;
}

/**
 * Runs `casework memory show|correct|forget`, writing lines to `out`. Returns the exit code:
 * an unknown note (or another customer's) is "no note N for customer X", exit code 2.
 */
export async function runMemoryCommand(args: string[], deps: { pool: Pool; out: (line: string) => void }): Promise<number> {
  try {
    const { positionals, values } = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        customer: { type: 'string' },
        note: { type: 'string' },
        text: { type: 'string' },
        actor: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    const [action, ...extra] = positionals;
    if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}"`);
    const customer = need(values.customer, '--customer');
    const actor = values.actor ?? 'cli';
    switch (action) {
      case 'show': {
        const memory = await showMemory(deps.pool, customer, { actor });
        if (values.json) deps.out(JSON.stringify(memory, null, 2));
        else describeMemory(memory).forEach((line) => deps.out(line));
        return DONE;
      }
      case 'correct': {
        const note = await correctNote(deps.pool, customer, need(values.note, '--note'), need(values.text, '--text'), actor);
        deps.out(values.json ? JSON.stringify(note) : `Corrected note ${note.note_id} for customer ${customer}: ${note.text}`);
        return DONE;
      }
      case 'forget': {
        const result = await forgetMemory(deps.pool, customer, { noteId: values.note, actor });
        const d = result.deleted;
        deps.out(
          values.json
            ? JSON.stringify(result)
            : values.note !== undefined
              ? `Forgot note ${values.note} for customer ${result.customer_id}.`
              : `Forgot all memory of customer ${result.customer_id}: ${d.notes} notes, ${d.cases} cases, ${d.profile_fields} profile fields.`,
        );
        return DONE;
      }
      default:
        throw new UsageError(action ? `unknown memory command "${action}"` : 'name a memory command');
    }
  } catch (error) {
    deps.out(`error: ${(error as Error).message}`);
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      deps.out(MEMORY_USAGE);
      return 2;
    }
    return exitCodeOf(error);
  }
}

/** `casework memory …` against the configured database. */
export function memoryCommand(args: string[], config: Config, out: (line: string) => void): Promise<number> {
  if (args[0] === 'reindex') {
    const { runReindexCommand } = require('./memory-reindex') as typeof import('./memory-reindex');
    const { selectEmbedder } = require('../../memory/select-embedder') as typeof import('../../memory/select-embedder');
    return withDatabase(config, (db) => runReindexCommand(args.slice(1), { admin: db.admin, app: db.app, embedder: selectEmbedder(config), out }));
  }
  return withDatabase(config, (db) => runMemoryCommand(args, { pool: db.app, out }));
}
