import type { Pool } from 'pg';
import { withModelFailures } from '../model/errors';
import type { Embedder } from '../memory/embedder';
import type { Model } from '../model/port';
import { createBulkReadActivities } from './bulk-read';
import { createCompactionActivities } from './compaction';
import { createDeskActivities, type DeskActivityDeps } from './desk';
import { createEvidenceActivities } from './evidence';
import { createMemoryActivities } from './memory';
import { createModelActivities } from './model';
import { createToolActivities } from './tools';
import { createTranscriptActivities, withResultLogging } from './transcript-log';
import type { TranscriptLog } from '../db/transcript-log';
import type { McpTools } from '../commerce/mcp/client';
import { createMcpActivities } from './mcp';

/** What the activities need from the world; built once, in worker.ts. */
export interface ActivityDeps {
  /** The application pool (acts as casework_app, under row-level security). */
  pool: Pool;
  model: Model;
  noteTtlMonths: number;
  /** Recall by meaning and embeddings on every memory write; unset, memory searches by words alone. */
  embedder?: Embedder;
  /** Desk clients for postToDesk; unset, every post is skipped (no desk configured). */
  desk?: DeskActivityDeps;
  /** The transcript log (history by reference); unset, only the steps of runs recorded before it can run. */
  transcriptLog?: TranscriptLog;
  /** The worker's MCP servers (CASEWORK_MCP_SERVERS); unset, runs are offered no MCP tools. */
  mcp?: McpTools;
}

/** Every activity the Investigation workflow calls, keyed by activity name (tools by tool name). */
export function createActivities(deps: ActivityDeps) {
  // Model errors are mapped for Temporal here, once, for every activity that calls the model.
  const model = withModelFailures(deps.model);
  return {
    ...createModelActivities({ model }),
    ...withResultLogging(createToolActivities({ pool: deps.pool }), deps.transcriptLog),
    ...withResultLogging(createMcpActivities({ pool: deps.pool, mcp: deps.mcp }), deps.transcriptLog),
    ...createTranscriptActivities({ model, log: deps.transcriptLog, mcp: deps.mcp }),
    ...createEvidenceActivities({ log: deps.transcriptLog }),
    ...createMemoryActivities({ pool: deps.pool, noteTtlMonths: deps.noteTtlMonths, embedder: deps.embedder, model }),
    ...createCompactionActivities({ model }),
    ...createBulkReadActivities({ pool: deps.pool, model }),
    ...createDeskActivities(deps.desk ?? { clients: new Map() }),
  };
}

/** The activity interface the workflow proxies. */
export type Activities = ReturnType<typeof createActivities>;
