import Anthropic from '@anthropic-ai/sdk';
import type { ContentBlock, Message, MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages';
import type { BetaMessage, MessageCreateParamsNonStreaming as BetaMessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { betasFor } from '../context/server-context';
import type { ModelReply, ModelRequest } from '../schemas/model';
import { MissingApiKeyError } from './errors';
import type { Model } from './port';

/** The beta that unlocks `context_management` (server-side tool-result clearing); GA messages.create has no such field. */
export { CONTEXT_MANAGEMENT_BETA } from '../context/server-context';

/** How the Anthropic adapter is built; values come from Config (ANTHROPIC_*, CASEWORK_MODEL*). */
export interface AnthropicModelOptions {
  apiKey: string;
  /** Unset means the SDK's own default, which honours ANTHROPIC_BASE_URL. */
  baseURL?: string;
  model: string;
  /** Upper bound on any request's max_tokens. */
  maxTokens: number;
  timeoutMs: number;
}

/** The model port over the Anthropic Messages API. One HTTP request per call: Temporal owns retries. */
export function createAnthropicModel(options: AnthropicModelOptions): Model {
  if (!options.apiKey) throw new MissingApiKeyError();
  const client = new Anthropic({
    apiKey: options.apiKey,
    ...(options.baseURL ? { baseURL: options.baseURL } : {}),
    // Retries inside an activity attempt would hide failures from Temporal and stretch the attempt past its timeout.
    maxRetries: 0,
    // An explicit timeout also stops the SDK refusing large non-streaming max_tokens.
    timeout: options.timeoutMs,
  });
  return {
    label: `anthropic:${options.model}`,
    offline: false,
    async create(request: ModelRequest): Promise<ModelReply> {
      const params = toParams(request, options);
      // Server-side context editing and compaction live on the beta API, each under its own beta header.
      const beta = (params as { context_management?: BetaMessageCreateParamsNonStreaming['context_management'] }).context_management;
      const message = beta
        ? await client.beta.messages.create({
            ...(params as unknown as BetaMessageCreateParamsNonStreaming),
            betas: betasFor(beta),
          })
        : await client.messages.create(params);
      return toReply(message);
    },
  };
}

/** The request body: extra first, so it can add fields (thinking, ...) but never replace model, messages or limits. */
function toParams(request: ModelRequest, options: AnthropicModelOptions): MessageCreateParamsNonStreaming {
  const extra = (request.extra ?? {}) as Partial<MessageCreateParamsNonStreaming>;
  return {
    ...extra,
    model: options.model,
    max_tokens: Math.min(request.max_tokens, options.maxTokens),
    system: request.system,
    messages: request.messages,
    // The API rejects an empty tools array alongside some features; absent means the same thing.
    ...(request.tools.length > 0 ? { tools: request.tools } : {}),
    // Native structured output (output_config.format, GA in this SDK): the reply's text block is the JSON object.
    ...(request.output_schema ? { output_config: { ...extra.output_config, format: { type: 'json_schema', schema: request.output_schema } } } : {}),
  };
}

/** Keeps only the fields the port promises, so the activity result stays small and JSON-safe. */
function toReply(message: Message | BetaMessage): ModelReply {
  return {
    id: message.id,
    model: message.model,
    // Beta blocks are a superset of GA blocks; they cross to the workflow as the same JSON.
    content: message.content as ContentBlock[],
    stop_reason: message.stop_reason as ModelReply['stop_reason'],
    usage: {
      input_tokens: message.usage.input_tokens,
      output_tokens: message.usage.output_tokens,
      cache_creation_input_tokens: message.usage.cache_creation_input_tokens ?? 0,
      cache_read_input_tokens: message.usage.cache_read_input_tokens ?? 0,
    },
  };
}
