// Which NodePool changes concern its NodeClaims' conditions (nodeclaim.drift, nodeclaim.consolidatable).
import { canonicalJson } from '../../operator/hash.ts';
import type { Change } from '../../state/changes.ts';

/**
 * A NodePool that is new, or whose spec or annotations (the template hash nodepool.hash writes) changed: what
 * drift and consolidateAfter read. A status write (nodepool.counter's usage, every few seconds per pool while
 * its nodes change; nodepool.readiness's conditions) is not, and used to re-check every NodeClaim of the pool.
 */
export function nodePoolTemplateChanged(c: Change): boolean {
  if (c.kind !== 'NodePool' || c.type !== 'upsert') return false;
  if (!c.old) return true;
  return (
    canonicalJson(c.obj.spec ?? {}) !== canonicalJson(c.old.spec ?? {}) ||
    canonicalJson(c.obj.metadata.annotations ?? {}) !== canonicalJson(c.old.metadata.annotations ?? {})
  );
}
