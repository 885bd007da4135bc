import { parseArgs } from 'node:util';
import type { Config } from '../../config';
import { replyAsPerson, resumeInvestigation } from '../../client/hand-off';
import { connectClient } from '../../temporal/client';
import { withDatabase } from '../database';
import { onlyPositional, UsageError } from '../usage';

type Out = (line: string) => void;

/** `casework resume <workflowId> --by <name> [--note <text>]`: a case that needs a person carries on. */
export async function resumeCommand(args: string[], config: Config, out: Out): Promise<number> {
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { by: { type: 'string' }, note: { type: 'string' } } });
  const target = onlyPositional(positionals, 'resume needs one workflow id');
  if (!values.by?.trim()) throw new UsageError('--by <name> is required: who resumes the case');
  const by = values.by;
  return withDatabase(config, async (db) => {
    const { client, close } = await connectClient(config, { pool: db.app });
    try {
      await resumeInvestigation(client, target, { by, ...(values.note ? { note: values.note } : {}) });
      out(`${target} resumed by ${by}; the investigation carries on`);
      return 0;
    } finally {
      await close();
    }
  });
}

/** `casework reply <workflowId> --by <name> --text <reply>`: a person answers the customer of a case that needs a person. */
export async function replyCommand(args: string[], config: Config, out: Out): Promise<number> {
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { by: { type: 'string' }, text: { type: 'string' } } });
  const target = onlyPositional(positionals, 'reply needs one workflow id');
  if (!values.by?.trim()) throw new UsageError('--by <name> is required: who writes the reply');
  if (!values.text?.trim()) throw new UsageError('--text <reply> is required');
  const { by, text } = values;
  return withDatabase(config, async (db) => {
    const { client, close } = await connectClient(config, { pool: db.app });
    try {
      await replyAsPerson(client, target, { by, text });
      out(`reply by ${by} recorded on ${target}; the case waits for the customer`);
      return 0;
    } finally {
      await close();
    }
  });
}
