/**
 * @module env-substitution
 * `${env:NAME}` and `${env:NAME:-default}` substitution in the scalar values of a parsed config file (never in
 * keys), and the "unset" normalisation that follows it.
 *
 * Rules:
 * - `NAME` matches `[A-Za-z_][A-Za-z0-9_]*`. A reference may be the whole value or part of it (`s3://${env:B}/x`).
 * - `${env:NAME}`: the variable's value (an empty value is allowed); unset is an issue naming the key and the
 *   variable.
 * - `${env:NAME:-default}`: the default when NAME is unset *or empty* (shell semantics). The default is literal
 *   text up to the first `}`; it may be empty, and `${env:X:-}` with X unset makes the value empty, i.e. unset.
 * - Non-recursive: substituted text and defaults are not scanned again.
 * - `$${` is a literal `${`. Any other `${` that is not a well-formed reference is an issue.
 * - After substitution a value is a string, typed by the schema like any other (`"8"` is the integer 8).
 * - `null` and `''` (including an empty substitution) mean "unset": the key's default applies.
 */
import type { ConfigIssue } from './config-issue.js';

/** Variables visible to substitution and env-only mode. */
export type EnvSource = Readonly<Record<string, string | undefined>>;

/** The outcome of substituting and normalising a parsed file tree. */
export interface SubstitutionResult {
  /** The tree with references replaced and unset values (`null`, `''`) replaced by `undefined`. */
  readonly tree: unknown;
  /** Missing variables and malformed references, each at its key path. */
  readonly issues: readonly ConfigIssue[];
  /** Paths whose value could not be resolved; schema issues at or under them would only repeat the problem. */
  readonly unresolvedPaths: ReadonlySet<string>;
  /** Every variable name referenced by the file (used to tell "referenced" SLUICE_* variables from stray ones). */
  readonly referencedNames: ReadonlySet<string>;
}

const REFERENCE = /^\$\{env:([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/;

interface StringOutcome {
  readonly text: string;
  readonly problems: readonly string[];
}

function substituteString(text: string, env: EnvSource, referenced: Set<string>): StringOutcome {
  if (!text.includes('${')) return { text, problems: [] };
  let out = '';
  const problems: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('$${', i)) {
      out += '${';
      i += 3;
      continue;
    }
    if (!text.startsWith('${', i)) {
      out += text[i];
      i += 1;
      continue;
    }
    const m = REFERENCE.exec(text.slice(i));
    if (m === null) {
      const close = text.indexOf('}', i);
      const shown = close < 0 ? text.slice(i, i + 30) : text.slice(i, close + 1);
      problems.push(
        `malformed reference ${JSON.stringify(shown)}: write \${env:NAME} or \${env:NAME:-default} (NAME is letters, digits and _), or $\${ for a literal \${`,
      );
      break;
    }
    const [whole, name = '', fallback] = m;
    referenced.add(name);
    const value = env[name];
    if (fallback !== undefined) {
      out += value === undefined || value === '' ? fallback : value;
    } else if (value === undefined) {
      problems.push(
        `environment variable ${name} is not set (referenced as \${env:${name}}; set it, or give a default with \${env:${name}:-value})`,
      );
    } else {
      out += value;
    }
    i += whole.length;
  }
  return { text: out, problems };
}

/**
 * Substitutes references in every string value of `tree` (a parsed YAML document) and normalises unset values.
 * Pure: reads only `env`.
 */
export function substituteEnvReferences(tree: unknown, env: EnvSource): SubstitutionResult {
  const issues: ConfigIssue[] = [];
  const unresolvedPaths = new Set<string>();
  const referencedNames = new Set<string>();

  const walk = (value: unknown, path: readonly string[]): unknown => {
    if (value === null || value === undefined) return undefined;
    if (typeof value === 'string') {
      const r = substituteString(value, env, referencedNames);
      if (r.problems.length > 0) {
        const at = path.join('.');
        unresolvedPaths.add(at);
        for (const message of r.problems) issues.push({ path: at, message });
        return undefined;
      }
      return r.text === '' ? undefined : r.text;
    }
    if (Array.isArray(value)) return value.map((v, i) => walk(v, [...path, String(i)]));
    if (typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        // defineProperty: a key spelled `__proto__` stays a plain (and then unknown) key.
        Object.defineProperty(out, k, {
          value: walk(v, [...path, k]),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    return value;
  };

  const result = walk(tree, []);
  return { tree: result, issues, unresolvedPaths, referencedNames };
}
