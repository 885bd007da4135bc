import { z } from 'zod';
import { isExternalId } from './types';

/** A desk id as the desks send them (string or integer), as a non-blank string of letters, digits and "_". */
export const DeskId = z
  .union([z.string(), z.number().int().nonnegative()])
  .transform((value) => String(value).trim())
  .refine((value) => value !== '', 'must not be blank')
  .refine((value) => value === '' || isExternalId(value), 'letters, digits and "_" only (1-80 characters)');
