#!/usr/bin/env node
// Fails when code or docs cite what a newcomer cannot open, or point at what does not exist:
//   - citations of documents outside the repository (internal RFC numbers such as "RFC 0058 §3.6", "DESIGN §7",
//     the reference system's surface notes, seed documents, section signs); cite a docs/ page or say it in words;
//   - local absolute paths (a developer's checkout or home directory);
//   - a relative Markdown link to a file that does not exist, or to a heading that file does not have.
// Scenario ids such as RFC0058.4 are allowed: docs/design/query-governance.md defines them. Public standards are
// cited as "RFC 9110" (four or more digits, no leading zero) and may carry a section sign.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** Skipped wherever they are: dependencies, build output, scratch space (as in .gitignore). */
const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', '.tmp']);
/** Skipped only at the repository root: the run-time data directories (`/data/`, `/wal/` in .gitignore). */
const SKIP_ROOT_DIRS = new Set(['data', 'wal']);
const TEXT = /\.(?:ts|mts|cts|js|mjs|cjs|md|ya?ml|tpl|sh|json)$|^Dockerfile$/;
const SKIP_FILES = new Set(['package-lock.json']);
/** This script and its test hold the patterns themselves. */
const SELF = new Set(['scripts/check-docs.mjs', 'scripts/hygiene-checks.test.mjs']);

const RULES = [
  { re: /\bRFC ?0\d{3}\b(?!\.\d)/, why: 'an internal RFC number: link docs/design/… or say it in words' },
  { re: /(?<!RFC [1-9]\d{3,4} ?)§/, why: 'a section sign: cite a docs/ page (a link), not a section number' },
  { re: /\bDESIGN(?:\.md)?\b/, why: 'DESIGN is not in the repository: link docs/design/… instead' },
  { re: /ourios/i, why: "the reference system's notes are not in the repository" },
  {
    re: /\bseeds?[ /]0\d\d\b|shared\/(?:reference|seeds)\b/i,
    why: 'a seed or reference document outside the repository',
  },
  {
    re: /\breference (?:surface|system|table|defaults?)\b|\bthe reference's\b/i,
    why: 'the reference system is not in the repository: say what it is in words',
  },
  { re: /(?<![\w.~-])\/(?:work|home|Users)\/[\w.-]/, why: 'a local absolute path: use a repository-relative one' },
];

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name); // relative to the repository root, which is the working directory
    if (SKIP_DIRS.has(name) || SKIP_ROOT_DIRS.has(p)) continue;
    if (statSync(p).isDirectory()) walk(p, out);
    else if (TEXT.test(name) && !SKIP_FILES.has(name)) out.push(p);
  }
  return out;
}

/** GitHub's heading anchor: lower case, punctuation dropped (except `-` and `_`), spaces to hyphens. */
function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const withoutFences = (markdown) => markdown.replace(/^```[\s\S]*?^```/gm, '');

function anchorsOf(file) {
  const anchors = new Set();
  for (const line of withoutFences(readFileSync(file, 'utf8')).split('\n')) {
    const m = /^#{1,6}\s+(.*)$/.exec(line);
    if (m !== null) anchors.add(slug(m[1]));
  }
  return anchors;
}

function brokenLinks(file, markdown) {
  const broken = [];
  const text = withoutFences(markdown).replace(/`[^`\n]*`/g, '');
  for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    const [pathPart, anchor] = target.split('#', 2);
    const to = pathPart === '' ? file : resolve(dirname(file), decodeURIComponent(pathPart));
    if (!existsSync(to)) broken.push(`${target}: no such file`);
    else if (anchor && to.endsWith('.md') && !anchorsOf(to).has(anchor)) broken.push(`${target}: no such heading`);
  }
  return broken;
}

const problems = [];
for (const path of walk('.', [])) {
  const file = relative('.', path).split('\\').join('/');
  if (SELF.has(file)) continue;
  const text = readFileSync(path, 'utf8');
  text.split('\n').forEach((line, i) => {
    for (const { re, why } of RULES) {
      const m = re.exec(line);
      if (m !== null) problems.push(`${file}:${i + 1}: "${m[0]}": ${why}`);
    }
  });
  if (file.endsWith('.md')) for (const b of brokenLinks(path, text)) problems.push(`${file}: link ${b}`);
}
if (problems.length) {
  console.error(`check-docs: ${problems.length} problem(s)\n  ` + problems.join('\n  '));
  process.exit(1);
}
console.log('check-docs: no outside citations, no local paths, every Markdown link resolves');
