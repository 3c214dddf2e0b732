/**
 * @module prefix-tree
 * The per-tenant Drain prefix tree. A root is keyed by (severity_number, scope key, token count); below it,
 * `depth = min(prefixDepth, tokenCount)` levels keyed by the leading tokens; the node at that depth holds the
 * group of candidate templates in creation order. A tree key is a literal token without digits, or `null` (the
 * `<*>` child) for masked tokens and tokens containing digits. Nodes are created only when a template is inserted,
 * so the node count is at most `templates × (prefixDepth + 1)`.
 */
import type { MinerTemplate, TemplateToken } from './template.js';

/** One tree node. */
export interface PrefixNode {
  readonly children: Map<string, PrefixNode>;
  wildcard: PrefixNode | undefined;
  /** Set on nodes at the group depth: candidate templates, oldest first. */
  group: MinerTemplate[] | undefined;
}

/** The roots of one tenant's tree, keyed by {@link rootKey}. */
export type PrefixRoots = Map<string, PrefixNode>;

function newNode(): PrefixNode {
  return { children: new Map(), wildcard: undefined, group: undefined };
}

/** The root key for a line shape. */
export function rootKey(severityNumber: number, scopeKey: string, tokenCount: number): string {
  return `${severityNumber}\u0000${tokenCount}\u0000${scopeKey}`;
}

/**
 * Descends without creating nodes: literal child if present, else the `<*>` child, else no group. Returns the
 * candidate group (possibly undefined: no candidates).
 */
export function findGroup(
  roots: PrefixRoots,
  key: string,
  treeKeys: readonly TemplateToken[],
): MinerTemplate[] | undefined {
  let node = roots.get(key);
  for (let i = 0; node !== undefined && i < treeKeys.length; i++) {
    const k = treeKeys[i];
    node = (k != null ? node.children.get(k) : undefined) ?? node.wildcard;
  }
  return node?.group;
}

/**
 * Chooses the insertion path for a new template and creates missing nodes: an existing literal child, else a new
 * literal child while the node has fewer than `maxNodeChildren` literal children, else the `<*>` child.
 * Returns the path taken (`null` = `<*>`), which the snapshot stores so a restore rebuilds the identical tree.
 */
export function choosePath(
  roots: PrefixRoots,
  key: string,
  treeKeys: readonly TemplateToken[],
  maxNodeChildren: number,
): TemplateToken[] {
  let node = roots.get(key);
  const path: TemplateToken[] = [];
  for (const k of treeKeys) {
    if (node === undefined) {
      path.push(k);
      continue;
    }
    const child = k != null ? node.children.get(k) : undefined;
    if (child !== undefined || (k != null && node.children.size < maxNodeChildren)) path.push(k);
    else path.push(null);
    node = path[path.length - 1] != null ? node.children.get(k as string) : node.wildcard;
  }
  return path;
}

/** Appends `template` to the group at `path` under root `key`, creating nodes as needed. */
export function insertAt(
  roots: PrefixRoots,
  key: string,
  path: readonly TemplateToken[],
  template: MinerTemplate,
): void {
  let node = roots.get(key);
  if (node === undefined) {
    node = newNode();
    roots.set(key, node);
  }
  for (const k of path) {
    let next: PrefixNode | undefined;
    if (k == null) {
      next = node.wildcard;
      if (next === undefined) node.wildcard = next = newNode();
    } else {
      next = node.children.get(k);
      if (next === undefined) {
        next = newNode();
        node.children.set(k, next);
      }
    }
    node = next;
  }
  (node.group ??= []).push(template);
}
