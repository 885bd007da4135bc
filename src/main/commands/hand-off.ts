import { parseArgs } from 'node:util';
import type { Config } from '../../config';
import { replyAsPerson, resumeInvestigation } from '../../client/hand-off';
import { connectClient } from '../../temporal/client';
import { onlyPositional, UsageError } from '../usage';

type Out = (line: string) => void;

/** `casework resume <workflowId> --by <name> [--note <text>]`: a case that needs a person carries on. */
export async function resumeCommand(args: string[], config: Config, out: Out): Promise<number> {
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { by: { type: 'string' }, note: { type: 'string' } } });
  const target = onlyPositional(positionals, 'resume needs one workflow id');
  if (!values.by?.trim()) throw new UsageError('--by <name> is required: who resumes the case');
  const { client, close } = await connectClient(config);
  try {
    await resumeInvestigation(client, target, { by: values.by, ...(values.note ? { note: values.note } : {}) });
    out(`${target} resumed by ${values.by}; the investigation carries on`);
    return 0;
  } finally {
    await close();
  }
}

/** `casework reply <workflowId> --by <name> --text <reply>`: a person answers the customer of a case that needs a person. */
export async function replyCommand(args: string[], config: Config, out: Out): Promise<number> {
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { by: { type: 'string' }, text: { type: 'string' } } });
  const target = onlyPositional(positionals, 'reply needs one workflow id');
  if (!values.by?.trim()) throw new UsageError('--by <name> is required: who writes the reply');
  if (!values.text?.trim()) throw new UsageError('--text <reply> is required');
  const { client, close } = await connectClient(config);
  try {
    await replyAsPerson(client, target, { by: values.by, text: values.text });
    out(`reply by ${values.by} recorded on ${target}; the case waits for the customer`);
    return 0;
  } finally {
    await close();
  }
}
