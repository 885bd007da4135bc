import type { Client } from '@temporalio/client';

// A test double for the Temporal client, for the HTTP server's own behaviour (answers, errors,
// the gate) where a real dev server adds nothing but time. Every investigation is "not found"
// unless a test overrides the call; events are taken as if signal-with-start succeeded.

/** Calls a stub may override: each receives what the real client method would. */
export interface StubCalls {
  getSystemInfo?: () => Promise<unknown>;
  signalWithStart?: () => Promise<{ signaledRunId: string }>;
  query?: () => Promise<unknown>;
  executeUpdate?: () => Promise<unknown>;
  signal?: () => Promise<void>;
  describe?: () => Promise<unknown>;
}

function notFound(): Promise<never> {
  const error = new Error('workflow not found (stub Temporal client)');
  error.name = 'WorkflowNotFoundError';
  return Promise.reject(error);
}

/** A stub Temporal client (test double) answering with `calls`, or the defaults above. */
export function stubTemporalClient(calls: StubCalls = {}): Client & { sent: string[] } {
  const sent: string[] = [];
  const client = {
    sent,
    withDeadline: <T>(_deadline: number, fn: () => Promise<T>) => fn(),
    workflowService: { getSystemInfo: calls.getSystemInfo ?? (async () => ({})) },
    workflow: {
      async signalWithStart(_wf: unknown, options: { workflowId: string }) {
        sent.push(options.workflowId);
        return calls.signalWithStart ? calls.signalWithStart() : { signaledRunId: 'run-stub' };
      },
      getHandle: (workflowId: string) => ({
        workflowId,
        query: calls.query ?? notFound,
        executeUpdate: calls.executeUpdate ?? notFound,
        signal: async () => {
          sent.push(workflowId);
          return calls.signal ? calls.signal() : notFound();
        },
        // Like the others, not found unless overridden: a described run always has a status, which a bare run id lacked.
        describe: calls.describe ?? notFound,
      }),
    },
  };
  return client as unknown as Client & { sent: string[] };
}
