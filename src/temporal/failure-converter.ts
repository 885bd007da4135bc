import { DefaultFailureConverter } from '@temporalio/common';

// Loaded by path (DataConverter.failureConverterPath) into the workflow sandbox as well as the
// worker and clients, so it may import nothing but @temporalio/common.

/**
 * Failures with their message and stack trace moved into an encoded payload, which the
 * encryption codec then encrypts: an error that quotes a customer ("no order for dana@…")
 * never sits in history in clear. History shows "Encoded failure" until decoded.
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
