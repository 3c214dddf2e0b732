/**
 * @module result-body
 * Serializing a finished response through the result budget (docs/design/query-governance.md): every chunk is counted against
 * `max_result_bytes` and reserved on the query's reservation before it is buffered, so the caller commits a
 * status only once the whole body is known to fit.
 */
import type { CeilingEnforcement, LimitError, QueryReservation, ResultBudget } from '@sluice/limits';
import { createResultBudget, limitErrorFromBudget } from '@sluice/limits';
import { QueryAbort } from './failures.js';

/**
 * Renders a finished response through a fresh budget and seals it into one buffer; throws a limit
 * {@link QueryAbort} if it does not fit (the ceiling, or the pool while the body is written). In observe mode a
 * body past `maxResultBytes` is kept and reported by the budget's `crossed`.
 */
export function renderThroughBudget(
  reservation: QueryReservation,
  maxResultBytes: number,
  write: (append: (chunk: string | Uint8Array) => void) => void,
  enforcement: CeilingEnforcement = 'enforce',
): ResultBudget {
  const budget = createResultBudget({ maxResultBytes, reservation, enforcement });
  try {
    write((chunk) => {
      const o = budget.append(chunk);
      if (o.status !== 'ok') throw new QueryAbort(limitErrorFromBudget(o) satisfies LimitError);
    });
    const sealed = budget.seal();
    if (sealed.status !== 'ok') throw new QueryAbort(limitErrorFromBudget(sealed) satisfies LimitError);
  } catch (e) {
    budget.release();
    throw e;
  }
  return budget;
}
