import { asyncLocalStorage } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { MODEL_FAILURE, toActivityFailure } from '../model/errors';
import type { Model } from '../model/port';
import type { ModelReply, ModelRequest } from '../schemas/model';
import type { CaseworkMetrics, ModelOutcome } from './metrics';
import { currentTracing, inSpan } from './tracing';
import { SpanKind, type Span } from '@opentelemetry/api';

// The model port is wrapped, not the callModel activity, because compaction and the bulk-read
// helper call the model from their own activities: every Messages API call passes through here.

const OUTCOME_BY_FAILURE: Record<string, ModelOutcome> = {
  [MODEL_FAILURE.rateLimited]: 'rate_limited',
  [MODEL_FAILURE.overloaded]: 'overloaded',
  [MODEL_FAILURE.unavailable]: 'unavailable',
  [MODEL_FAILURE.connectionFailed]: 'connection_failed',
  [MODEL_FAILURE.timedOut]: 'timed_out',
  [MODEL_FAILURE.requestRejected]: 'rejected',
};

/** The outcome label for an error a model call threw (an SDK error, or one already mapped). */
export function modelOutcomeOf(error: unknown): ModelOutcome {
  const failure = error instanceof ApplicationFailure ? error : toActivityFailure(error);
  return (failure instanceof ApplicationFailure && failure.type && OUTCOME_BY_FAILURE[failure.type]) || 'error';
}

/** What the model span says about the reply, by the OpenTelemetry GenAI conventions: names and counts, never text. */
function recordReply(span: Span | undefined, reply: ModelReply): void {
  if (!span) return;
  const { usage } = reply;
  span.setAttributes({
    'gen_ai.response.model': reply.model,
    'gen_ai.response.id': reply.id,
    'gen_ai.response.finish_reasons': reply.stop_reason ? [reply.stop_reason] : [],
    // The conventions count every input token here; the Messages API reports the cached parts beside input_tokens.
    'gen_ai.usage.input_tokens': usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens,
    'gen_ai.usage.output_tokens': usage.output_tokens,
    'gen_ai.usage.cache_creation.input_tokens': usage.cache_creation_input_tokens,
    'gen_ai.usage.cache_read.input_tokens': usage.cache_read_input_tokens,
  });
}

/**
 * The same model, counting every call (by purpose and outcome), its tokens by kind and its
 * duration, logging one line per call with token counts only (never the prompt or reply), and,
 * when tracing is on, one client span per call named "chat <model>" with the GenAI attributes.
 */
export function instrumentModel(model: Model, metrics: CaseworkMetrics, options: { requestModel?: string } = {}): Model {
  const requestModel = options.requestModel ?? model.label;
  // Decided when the worker is made, as its interceptors are: a worker made untraced makes no model spans.
  const tracing = currentTracing() ?? null;
  return {
    label: model.label,
    offline: model.offline,
    create(request: ModelRequest): Promise<ModelReply> {
      const attributes = {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.system': 'anthropic',
        'gen_ai.request.model': requestModel,
        'gen_ai.request.max_tokens': request.max_tokens,
        'casework.model.purpose': request.purpose,
        'casework.model.offline': model.offline === true,
      };
      return inSpan(`chat ${requestModel}`, attributes, (span) => counted(request, span), { kind: SpanKind.CLIENT, tracing });
    },
  };

  async function counted(request: ModelRequest, span: Span | undefined): Promise<ModelReply> {
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    // Inside an activity the context logger adds workflowId, activity type and attempt.
    const log = asyncLocalStorage.getStore()?.log;
    try {
      const reply = await model.create(request);
      recordReply(span, reply);
      const elapsed = seconds();
      metrics.recordModelCall(request.purpose, 'ok', elapsed, reply.usage);
      log?.info('model call', {
        purpose: request.purpose,
        model: reply.model,
        stop_reason: reply.stop_reason,
        input_tokens: reply.usage.input_tokens,
        cache_creation_input_tokens: reply.usage.cache_creation_input_tokens,
        cache_read_input_tokens: reply.usage.cache_read_input_tokens,
        output_tokens: reply.usage.output_tokens,
        durationMs: Math.round(elapsed * 1000),
      });
      return reply;
    } catch (error) {
      const outcome = modelOutcomeOf(error);
      metrics.recordModelCall(request.purpose, outcome, seconds());
      log?.warn('model call failed', { purpose: request.purpose, outcome, error: (error as Error).name });
      span?.setAttribute('error.type', outcome);
      throw error;
    }
  }
}
