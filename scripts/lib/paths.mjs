import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRootPath = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
