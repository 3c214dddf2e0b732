/**
 * @module provenance
 * The provenance record of a compacted file; defined in `@sluice/storage` (compaction-provenance.ts) because readers
 * need it too, and re-exported here for the compactor's modules.
 */
export { PROVENANCE_KEY, encodeProvenance, provenanceOf, type Provenance } from '@sluice/storage';
