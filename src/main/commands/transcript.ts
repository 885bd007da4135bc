import { parseArgs } from 'node:util';
import type { Config } from '../../config';
import { transcriptLines } from '../../client/transcript-text';
import { NotFoundError } from '../../errors';
import { TranscriptLog } from '../../db/transcript-log';
import { bodyCodecOf } from '../../temporal/codec/body-codec';
import { CustomerErasedError } from '../../temporal/codec/customer-keys';
import { codecFor } from '../../temporal/data-converter';
import { withDatabase } from '../database';
import { onlyPositional } from '../usage';

type Out = (line: string) => void;

/**
 * `casework transcript <workflowId> [--json]`: the whole conversation of an investigation from
 * the transcript log, across every run of it, decoded with the configured keys: every customer
 * message, reply and tool result word for word. `--json` prints the entries (seq, role, block).
 */
export async function transcriptCommand(args: string[], config: Config, out: Out): Promise<number> {
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' } } });
  const workflowId = onlyPositional(positionals, 'transcript needs one workflow id, e.g. investigation-T-1001');
  return withDatabase(config, async (db) => {
    const log = new TranscriptLog(db.app, bodyCodecOf(codecFor(config)));
    const entries = await log.all(workflowId, ['message']).catch((error: unknown) => {
      if (!(error instanceof CustomerErasedError)) throw error;
      return error;
    });
    if (entries instanceof CustomerErasedError) {
      // The customer's data key is destroyed: the content is gone for everyone, and that is the answer.
      out(values.json ? JSON.stringify({ workflowId, erased_on: entries.erasedAt.slice(0, 10) }) : `${workflowId}: erased on ${entries.erasedAt.slice(0, 10)}`);
      return 0;
    }
    if (entries.length === 0) {
      throw new NotFoundError(
        `the transcript log has no entries for ${workflowId}: check the workflow id (investigation-<ticketId>); an investigation writes there from its first model step, so one that has not reached it yet has none (casework status shows where it stands)`,
      );
    }
    if (values.json)
      out(
        JSON.stringify(
          entries.map((e) => ({ seq: e.seq, role: e.role, block: e.body })),
          null,
          2,
        ),
      );
    else transcriptLines(entries).forEach((line) => out(line));
    return 0;
  });
}
