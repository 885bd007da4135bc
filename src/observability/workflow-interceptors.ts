import { log, workflowInfo, type WorkflowInterceptors } from '@temporalio/workflow';
import { SA } from '../schemas/search-attributes';

// Bundled into the workflow code (a workflow interceptor module), so deterministic code only:
// no I/O, no Node builtins. Log lines from workflow code (`log` from @temporalio/workflow) get
// the customer id, ticket id and current step, read from the run's own search attributes; and
// each signal and update is logged by name (never its arguments, which carry message bodies).
// Logging is dropped during replay by the SDK, so none of this changes a workflow's commands.

function eventIdOf(args: unknown[]): string | undefined {
  const first = args[0] as { eventId?: unknown; requestId?: unknown } | undefined;
  const id = first?.eventId ?? first?.requestId;
  return typeof id === 'string' ? id : undefined;
}

/** The workflow interceptors the worker registers (WorkerOptions.interceptors.workflowModules). */
export const interceptors = (): WorkflowInterceptors => ({
  inbound: [
    {
      async handleSignal(input, next) {
        log.info('signal received', { signal: input.signalName, eventId: eventIdOf(input.args) });
        return next(input);
      },
      async handleUpdate(input, next) {
        log.info('update received', { update: input.name, updateId: input.updateId, eventId: eventIdOf(input.args) });
        return next(input);
      },
    },
  ],
  outbound: [
    {
      getLogAttributes(input, next) {
        const attributes = workflowInfo().typedSearchAttributes;
        const customerId = attributes.get(SA.customerId);
        const ticketId = attributes.get(SA.ticketId);
        const step = attributes.get(SA.step);
        return next({
          ...input,
          ...(customerId !== undefined ? { customerId } : {}),
          ...(ticketId !== undefined ? { ticketId } : {}),
          ...(step !== undefined ? { step } : {}),
        });
      },
    },
  ],
});
