import type { Model } from '../model/port';
import { withHeartbeat } from './heartbeat';
import type { ModelReply, ModelRequest } from '../schemas/model';

/** What the model activity needs: the model port (Anthropic or the offline investigator). */
export interface ModelActivityDeps {
  model: Model;
}

/** Builds the model activity. The port it is given already maps SDK errors to ApplicationFailures (withModelFailures). */
export function createModelActivities(deps: ModelActivityDeps) {
  return {
    /** One Messages API call. */
    async callModel(request: ModelRequest): Promise<ModelReply> {
      return withHeartbeat(() => deps.model.create(request));
    },
  };
}
