import type { Model } from '../model/port';
import { toActivityFailure } from '../model/errors';
import type { ModelReply, ModelRequest } from '../schemas/model';

/** What the model activity needs: the model port (Anthropic or the offline investigator). */
export interface ModelActivityDeps {
  model: Model;
}

/** Builds the model activity; SDK errors leave it as ApplicationFailures so Temporal retries only what can succeed. */
export function createModelActivities(deps: ModelActivityDeps) {
  return {
    /** One Messages API call. */
    async callModel(request: ModelRequest): Promise<ModelReply> {
      try {
        return await deps.model.create(request);
      } catch (error) {
        throw toActivityFailure(error);
      }
    },
  };
}
