/**
 * @module memory-setup
 * The process's memory plan from its configuration (docs/deployment.md, "Sizing the query memory pool" and "Sizing
 * the sink ceiling"): the query pool and the sink ceiling from one reading of the memory limit, logged once each
 * with their source, and checked to fit together with the measured baseline.
 */
import type { SluiceConfig } from '@sluice/config';
import { planMemory, type MemoryPlan, type MemorySource } from '@sluice/limits';
import type { Logger } from '@sluice/telemetry';

/**
 * Plans and logs the memory of the enabled roles.
 * @throws Error with the plan's message when it is invalid or does not fit (startup must fail before any listener
 * opens).
 */
export function planProcessMemory(config: SluiceConfig, source: MemorySource, log: Logger): MemoryPlan {
  const planned = planMemory({
    roles: {
      receiver: config.receiver.enabled,
      querier: config.querier.enabled,
      compaction: config.compaction.enabled,
    },
    poolBytes: config.querier.limits.memoryPoolBytes,
    poolFraction: config.querier.limits.memoryPoolFraction,
    sinkCeilingBytes: config.receiver.sink.ceilingBytes,
    source,
  });
  if (!planned.ok) throw new Error(planned.error.message);
  const plan = planned.value;
  if (plan.pool !== null) {
    log.info('query memory pool sized', {
      bytes: plan.pool.sizeBytes,
      source: plan.pool.source,
      share: plan.pool.share,
      detail: plan.pool.description,
    });
  }
  if (plan.sinkCeiling !== null) {
    log.info('sink ceiling sized', {
      bytes: plan.sinkCeiling.sizeBytes,
      source: plan.sinkCeiling.source,
      share: plan.sinkCeiling.share,
      baseline_bytes: plan.baselineBytes,
      detail: plan.sinkCeiling.description,
    });
  }
  for (const warning of plan.warnings) log.warn(warning);
  return plan;
}
