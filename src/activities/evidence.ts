import { messagesOfEntries } from '../context/log-messages';
import { toolEvidence } from '../context/tool-evidence';
import type { TranscriptLog } from '../db/transcript-log';
import { BadInputError } from '../errors';
import { failuresForTemporal } from './failures';

// The refund note's evidence for a run kept by reference: its skeleton holds 100-character
// previews, so the lines are written from the whole tool results in the transcript log. Only
// the lines (at most five) go back to the workflow, so its history stays small.

/** What the workflow asks for: the run, the last entry its transcript holds, and the order's currency. */
export interface EvidenceRequest {
  workflowId: string;
  /** Entries after this one (results of the reply being run) are not in the transcript yet, so not in the evidence. */
  throughSeq: number;
  /** Entries before this one belong to earlier, closed runs of the workflow id (a reopened ticket), so not to this case's evidence. */
  fromSeq?: number;
  currency?: string;
}

/** Builds the evidence activity over the transcript log. */
export function createEvidenceActivities(deps: { log?: TranscriptLog }) {
  return failuresForTemporal({
    /** The refund note's evidence lines, from the whole results in the log of every run of the investigation. */
    async toolEvidenceFromLog(request: EvidenceRequest): Promise<string[]> {
      if (!deps.log) throw new BadInputError('this worker has no transcript log (createActivities needs transcriptLog): evidence of a run by reference cannot be read');
      const entries = await deps.log.all(request.workflowId, ['message'], { from: request.fromSeq, through: request.throughSeq });
      const messages = messagesOfEntries(entries);
      return toolEvidence(messages, request.currency ? { currency: request.currency } : {});
    },
  });
}
