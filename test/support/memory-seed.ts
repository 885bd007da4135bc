import type { createMemoryActivities } from '../../src/activities/memory';

// The past case the memory tests seed for a customer: one refunded "wrong building" ticket,
// T1, order 4471, closed on 2026-10-14.

type MemoryActivities = ReturnType<typeof createMemoryActivities>;

/** Records the refunded wrong-building case (ticket T1, order 4471) in `customerId`'s memory. */
export async function recordWrongBuildingCase(memory: MemoryActivities, customerId: string): Promise<void> {
  await memory.recordCase({
    customerId,
    workflowId: 'investigation-T1',
    ticketId: 'T1',
    orderIds: ['4471'],
    summary: 'Wrong building',
    resolution: 'refunded',
    closedOn: '2026-10-14',
  });
}
