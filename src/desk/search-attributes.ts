import { SA } from '../schemas/search-attributes';
import type { DeskRef } from './types';

/** The desk search attributes (registered with casework's others in src/schemas/search-attributes.ts). */
export const DESK_SA = { desk: SA.desk, deskTicketId: SA.deskTicketId } as const;

/** The typed search attributes naming the desk ticket a run answers. */
export function deskSearchAttributes(ref: Pick<DeskRef, 'desk' | 'externalTicketId'>) {
  return [
    { key: DESK_SA.desk, value: ref.desk },
    { key: DESK_SA.deskTicketId, value: ref.externalTicketId },
  ];
}
