/**
 * @module storage-failure-text
 * The user-facing words for the two storage kinds (docs/rejections.md): what is wrong, with which object, and what
 * to do. Built from the typed facts only, so no store, SDK or decoder text can reach a response.
 */
import type { CorruptReason, StorageOperation, UnavailableReason } from '@sluice/storage';
import { assertNever } from '@sluice/core';
import type { QueryError } from './query-error.js';

/** What is wrong with a corrupt object, in words. */
function corruptText(reason: CorruptReason): string {
  switch (reason) {
    case 'manifest_invalid':
      return 'the partition manifest does not parse or is not a manifest';
    case 'manifest_foreign_name':
      return 'the partition manifest names something other than a .parquet file of its own partition';
    case 'manifest_missing_file':
      return 'the partition manifest names a data file that does not exist';
    case 'parquet_unreadable':
      return 'the Parquet file cannot be decoded (truncated or damaged) or is not a Sluice data file';
    case 'tenant_mismatch':
      return "the data file's tenant_id column disagrees with the tenant of its key";
    default:
      return assertNever(reason, 'corrupt reason');
  }
}

/** The operation, in words. */
function operationText(operation: StorageOperation): string {
  switch (operation) {
    case 'get':
      return 'read';
    case 'get_range':
      return 'range read';
    case 'head':
      return 'size check';
    case 'list':
      return 'listing';
    case 'put':
    case 'put_conditional':
      return 'write';
    case 'delete':
      return 'delete';
    default:
      return assertNever(operation, 'storage operation');
  }
}

function unavailableText(reason: UnavailableReason): string {
  switch (reason) {
    case 'timeout':
      return 'no answer in time';
    case 'connection':
      return 'connection refused or lost';
    case 'server_error':
      return 'the server answered with an error or throttled';
    case 'truncated':
      return 'the answer was cut short';
    default:
      return assertNever(reason, 'unavailable reason');
  }
}

/** `storage_corrupt` (500): names the object and what is wrong with it. */
export function storageCorruptError(key: string, reason: CorruptReason): QueryError {
  return {
    kind: 'storage_corrupt',
    message:
      `corrupt object in storage: ${key}: ${corruptText(reason)}; the query cannot be answered while ` +
      'querier.on_corrupt_object is fail. Repair or remove the object, or set querier.on_corrupt_object: skip ' +
      'to answer without it',
    key,
    reason,
  };
}

/** `storage_unavailable` (503) for a storage call that failed on every attempt it was allowed. */
export function storageUnavailableError(
  operation: StorageOperation,
  key: string | null,
  attempts: number,
  reason: UnavailableReason,
): QueryError {
  const what = `${operationText(operation)}${key !== null ? ` of ${key}` : ''}`;
  return {
    kind: 'storage_unavailable',
    message: `object storage unavailable: the ${what} failed after ${attempts} attempt(s) (${unavailableText(reason)}); retry later`,
    operation,
    key,
    attempts,
    reason,
  };
}

/**
 * `storage_unavailable` (503) for a query stopped at its deadline while it was waiting on storage: the deadline
 * is not the query's fault, so it must not be told to ask for less.
 */
export function storageStalledError(
  timeoutMs: number,
  stall: { readonly operation: StorageOperation; readonly key: string | null; readonly attempts: number },
): QueryError {
  const what = `${operationText(stall.operation)}${stall.key !== null ? ` of ${stall.key}` : ''}`;
  return {
    kind: 'storage_unavailable',
    message:
      `object storage unavailable: the query reached its deadline of ${timeoutMs} ms waiting on storage ` +
      `(the ${what}, attempt ${stall.attempts}); retry later, and check object-store health`,
    operation: stall.operation,
    key: stall.key,
    attempts: stall.attempts,
    reason: 'timeout',
  };
}
