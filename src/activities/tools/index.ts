import type { Pool } from 'pg';
import { failuresForTemporal } from '../failures';
import { createOrderTools } from './orders';
import { createPaymentTools } from './payments';
import { createPolicyTools } from './policies';
import { createRefundTools } from './refunds';
import { createTicketTools } from './tickets';
import { createTrackingTools } from './tracking';

/**
 * The investigation tools that read and write the shop's records, each an activity named after
 * its tool, plus recordRefundDecision (the workflow's, not the model's). Every query runs under
 * row-level security for the customer in the call's context, never one named in the input.
 */
export function createToolActivities(deps: { pool: Pool }) {
  return failuresForTemporal({
    ...createOrderTools(deps),
    ...createTrackingTools(deps),
    ...createTicketTools(deps),
    ...createPaymentTools(deps),
    ...createPolicyTools(deps),
    ...createRefundTools(deps),
  });
}
