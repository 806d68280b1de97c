#!/usr/bin/env node
// Runs a command and ends it when our stdin closes, i.e. when the process that
// started us died, even by SIGKILL (Linux gives children no such signal by
// default). `npm start` runs the web server through this, so a crashed bootstrap
// never leaves a server holding the port.
//   node scripts/lib/supervised.mjs <command> [args...]
import { spawn } from "node:child_process";

const [cmd, ...args] = process.argv.slice(2);
const child = spawn(cmd, args, { stdio: ["ignore", "inherit", "inherit"] });
let ending = false;
const end = (sig) => {
  if (ending) return;
  ending = true;
  child.kill(sig);
  setTimeout(() => child.kill("SIGKILL"), 15_000).unref();
};
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, () => end(sig));
process.stdin.on("end", () => end("SIGTERM")).on("error", () => end("SIGTERM")).resume();
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
