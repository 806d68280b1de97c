import nextVitals from "eslint-config-next/core-web-vitals";
import nextTs from "eslint-config-next/typescript";
import { defineConfig, globalIgnores } from "eslint/config";

export default defineConfig([
  ...nextVitals,
  ...nextTs,
  globalIgnores([".next/**", "node_modules/**", "server/db/generated/**", ".airlock/**", ".ci-out/**", "test-results/**", "playwright-report/**", "next-env.d.ts"]),
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    // The architecture rule: UI imports server code only as types, or through
    // the server-side tRPC helpers in server components.
    files: ["components/**/*.{ts,tsx}"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^@/server/(?!db/generated/enums$|domain/stacks/spec$|(?:domain|execution)/.+/schemas$)",
              allowTypeImports: true,
              message: "Components import server code only as types (or enums/schemas); fetch data through tRPC.",
            },
          ],
        },
      ],
    },
  },
]);
