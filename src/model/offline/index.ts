import { createHash } from 'node:crypto';
import { BadRequestError } from '@anthropic-ai/sdk';
import { contextManagementProblems } from '../../context/server-context';
import type { Model } from '../port';
import type { ModelReply, ModelRequest } from '../../schemas/model';
import { estimateBlockTokens } from '../../context/tokens';
import { offlineBulkRead } from './bulk-reader';
import { createPromptCache, canonicalJson, type PromptCache } from './cache';
import { offlineCompact } from './compactor';
import { decide, toContent } from './investigator';
import { offlineJudgeSupersession } from './supersession';

/** The offline model's name in every reply and output. */
export const OFFLINE_MODEL = 'offline-investigator (deterministic test double)';

/** Options for the offline model; the clock only feeds the simulated prompt cache. */
export interface OfflineModelOptions {
  cache?: PromptCache;
  now?: () => number;
}

/**
 * A deterministic test double of the model alone: it reads the request the workflow built
 * (conversation, tool results, memory block) and answers in Messages API shapes, with usage from
 * the token estimator and a simulated prompt cache. The same request always gives the same reply.
 */
export function createOfflineModel(options: OfflineModelOptions = {}): Model {
  const cache = options.cache ?? createPromptCache();
  const now = options.now ?? Date.now;
  return {
    label: 'offline investigator (deterministic test double; set ANTHROPIC_API_KEY for Claude)',
    offline: true,
    async create(request: ModelRequest): Promise<ModelReply> {
      refuseMalformedContextManagement(request);
      if (request.purpose === 'compact') return offlineCompact(request);
      if (request.purpose === 'bulk_read') return offlineBulkRead(request);
      if (request.purpose === 'supersede') return offlineJudgeSupersession(request);
      const seed = createHash('sha256').update(canonicalJson(request.messages)).digest('hex').slice(0, 16);
      const { content, stop_reason } = toContent(decide(request), seed);
      const outputTokens = content.reduce((n, block) => n + estimateBlockTokens(block), 0);
      return {
        id: `msg_off_${seed}`,
        model: OFFLINE_MODEL,
        content,
        stop_reason,
        usage: cache.account(request, now(), outputTokens),
      };
    },
  };
}

/**
 * Refuses a `context_management` field the API would refuse (src/context/server-context.ts), with
 * the 400 invalid_request_error the API answers, so a malformed edit fails here as it would there.
 */
function refuseMalformedContextManagement(request: ModelRequest): void {
  const extra = request.extra ?? {};
  if (!('context_management' in extra)) return;
  const thinking = (extra.thinking as { type?: string } | undefined)?.type;
  const problems = contextManagementProblems(extra.context_management, thinking === 'enabled' || thinking === 'adaptive');
  if (problems.length === 0) return;
  const message = problems.join('; ');
  throw new BadRequestError(400, { type: 'error', error: { type: 'invalid_request_error', message } }, message, new Headers());
}
