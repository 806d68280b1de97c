import type { AgentCase } from "./types";

// acme/web-console: an eslint failure, a docker build failure after a base
// image bump, and a flaky Playwright timeout the agent hands over to people.

const notificationsPageBefore = `export default async function NotificationsPage() {
  const queryClient = getQueryClient();
  prefetchPreferences(queryClient);

  return (
    <HydrationBoundary state={dehydrate(queryClient)}>
      <PreferencesForm />
    </HydrationBoundary>
  );
}`;

const profileActionsBefore = `export async function updateProfile(formData: FormData) {
  const session = await requireSession();
  const parsed = zProfile.safeParse(Object.fromEntries(formData));
  if (!parsed.success) return { ok: false, errors: parsed.error.flatten() } as const;`;

export const consoleEslint: AgentCase = {
  opening:
    "`eslint --max-warnings 0` fails with two errors and one warning, all in files this PR moved to server components: a floating promise in the notifications page, an unused `session` in the profile action, and a hook dependency warning. Checking each against the code.",
  reproduce: {
    command: "npx eslint src/app/settings --max-warnings 0",
    description: "Lint the settings pages",
    output: `src/app/settings/notifications/page.tsx
  14:3  error    Promises must be awaited, end with a call to .catch, end with a call to .then with a rejection handler or be explicitly marked as ignored with the \`void\` operator  @typescript-eslint/no-floating-promises

src/app/settings/profile/actions.ts
  22:9  error  'session' is assigned a value but never used  @typescript-eslint/no-unused-vars

✖ 2 problems (2 errors, 0 warnings)`,
    ms: 7_640,
    isError: true,
  },
  read: { path: "src/app/settings/notifications/page.tsx", firstLine: 12, text: notificationsPageBefore },
  grep: {
    pattern: "requireSession\\(\\)",
    path: "src/app/settings",
    output: `src/app/settings/profile/actions.ts:22:  const session = await requireSession();
src/app/settings/layout.tsx:9:  await requireSession();`,
  },
  rootCause:
    "`prefetchPreferences()` is called without `await` in an async server component (page.tsx:14), so the page can render before the cache is filled; `session` in actions.ts:22 is only needed for its auth side effect. The hook warning is in a file outside this PR's diff and disappears with the first fix (the effect moved to the server).",
  diagnosis: `# Diagnosis: lint errors from the server-component move

**Check:** \`CI / lint\` (\`eslint . --max-warnings 0\`)

| file | line | rule | cause |
| --- | --- | --- | --- |
| \`src/app/settings/notifications/page.tsx\` | 14 | \`no-floating-promises\` | \`prefetchPreferences(queryClient)\` is not awaited, so the dehydrated state may be empty and the form fetches again on the client |
| \`src/app/settings/profile/actions.ts\` | 22 | \`no-unused-vars\` | \`session\` is only there to enforce sign-in |
| \`src/app/settings/notifications/page.tsx\` | 31 | \`react-hooks/exhaustive-deps\` (warning) | leftover \`useEffect\` from the client version |

## Fix

- \`await prefetchPreferences(queryClient)\`: the real bug; without it the prefetch races the render.
- \`await requireSession()\` without binding the result, as \`settings/layout.tsx\` does.
`,
  closingDiagnose:
    "**Root cause:** `prefetchPreferences()` is not awaited in the new server component (a real race, not just style), plus an unused `session` binding.\n\nDiagnosis in `diagnosis.md`; posted to the PR (bot comments are allowed here).",
  comment:
    "**Airlock diagnosis** for `CI / lint`\n\n- `notifications/page.tsx:14`: `prefetchPreferences()` must be awaited, or the dehydrated state can be empty and the form refetches on the client.\n- `profile/actions.ts:22`: `session` is unused; `await requireSession()` on its own keeps the auth check.\n\nComment `@agent fix failing check` to get a patch.",
  fix: {
    changes: [
      { path: "src/app/settings/notifications/page.tsx", firstLine: 12, before: notificationsPageBefore, edits: [{ old: "  prefetchPreferences(queryClient);", new: "  await prefetchPreferences(queryClient);" }] },
      { path: "src/app/settings/profile/actions.ts", firstLine: 21, before: profileActionsBefore, edits: [{ old: "  const session = await requireSession();", new: "  await requireSession();" }] },
    ],
    verify: {
      command: "npx eslint . --max-warnings 0 && npx tsc --noEmit",
      description: "Lint and type-check",
      output: "",
      ms: 24_900,
    },
    review: "Both changes are minimal; awaiting the prefetch fixes a real hydration race. No behaviour change otherwise. Approve.",
    commitMessage: "settings: await the preferences prefetch; drop the unused session binding",
    closingRepair:
      "Lint is clean (`eslint . --max-warnings 0` and `tsc --noEmit` pass).\n\n- `notifications/page.tsx`: await the prefetch\n- `profile/actions.ts`: keep the auth check, drop the unused binding\n\nPatch in `fix.patch` (2 files, +2 −2). Requesting approval to push to `settings-rsc`.",
  },
};

const dockerfileBefore = `FROM node:22-alpine AS deps
WORKDIR /app
ARG NPM_TOKEN
RUN echo "//npm.pkg.github.com/:_authToken=\${NPM_TOKEN}" > .npmrc
COPY package.json package-lock.json ./
RUN npm ci --omit=dev`;

export const consoleDocker: AgentCase = {
  opening:
    "The image build fails in `npm ci`: `bcrypt@5.1.1` has no prebuilt binary for Node 22 on musl, falls back to node-gyp, and the Alpine image has no Python. Confirming which dependency pulls `bcrypt` in.",
  reproduce: {
    command: "npm ls bcrypt",
    description: "Find who depends on bcrypt",
    output: `web-console@2.14.0 /workspace/acme/web-console
└─┬ @acme/auth-server@1.9.3
  └── bcrypt@5.1.1`,
    ms: 1_410,
  },
  read: { path: "Dockerfile", firstLine: 1, text: dockerfileBefore },
  rootCause:
    "`node:22-alpine` has no Python/make/g++, and `bcrypt@5.1.1` ships no prebuilt binary for Node 22 (ABI 127) on musl, so `npm ci` compiles it from source and fails.",
  diagnosis: `# Diagnosis: \`bcrypt\` cannot build on \`node:22-alpine\`

**Check:** \`CI / build-image\` · **Step:** \`Build and push image\` (Dockerfile:9, \`npm ci --omit=dev\`)

## Root cause

\`@acme/auth-server@1.9.3\` depends on \`bcrypt@5.1.1\`. Its prebuilt binaries stop at Node 20 for musl; on \`node:22-alpine\` node-pre-gyp falls back to compiling with node-gyp, which needs Python 3, make and a C++ compiler. The \`deps\` stage has none of them.

## Options

1. Add \`RUN apk add --no-cache python3 make g++\` to the \`deps\` stage (build tools stay out of the runtime stage).
2. Bump \`@acme/auth-server\` to 2.x, which uses \`bcryptjs\` (pure JS, no native build).
3. Stay on \`node:20-alpine\` until option 2 ships.

Option 2 is the durable fix; option 1 unblocks this PR today.

The build log contained the npm token in an \`echo\` line; it was redacted before it reached the agent. Consider \`RUN --mount=type=secret\` so it never lands in a layer.
`,
  closingDiagnose:
    "**Root cause:** `bcrypt@5.1.1` must compile from source on `node:22-alpine`, which lacks Python and a compiler.\n\nThree options in `diagnosis.md`; bumping `@acme/auth-server` to 2.x (bcryptjs) is the durable one.",
  fix: {
    changes: [{ path: "Dockerfile", firstLine: 1, before: dockerfileBefore, edits: [{ old: "WORKDIR /app\n", new: "WORKDIR /app\n# bcrypt has no musl prebuild for Node 22: build tools for node-gyp, deps stage only\nRUN apk add --no-cache python3 make g++\n" }] }],
    verify: {
      command: "docker build --target deps -t web-console:deps-check .",
      description: "Build the deps stage",
      output: "#10 [deps 5/5] RUN npm ci --omit=dev\n#10 41.27 added 612 packages in 40s\n#10 DONE 41.9s\n#11 exporting to image\n#11 DONE 2.3s",
      ms: 64_000,
    },
    review: "Build tools are confined to the deps stage; the runtime stage copies node_modules only. Approve as a stopgap until @acme/auth-server 2.x.",
    commitMessage: "Dockerfile: install node-gyp build tools in the deps stage for bcrypt on Node 22",
    closingRepair: "The deps stage builds with `python3 make g++` installed. Patch in `fix.patch`; requesting approval to push to `renovate/node-22.x`.",
  },
  comment:
    "**Airlock diagnosis** for `CI / build-image`\n\n`bcrypt@5.1.1` (via `@acme/auth-server`) has no prebuilt binary for Node 22 on musl and compiles from source, but `node:22-alpine` has no Python. Either `apk add python3 make g++` in the `deps` stage, or bump `@acme/auth-server` to 2.x (bcryptjs).",
};

export const consoleE2e: AgentCase = {
  opening:
    "`settings › saves notification preferences` times out waiting for **Save preferences** to become enabled. It passed on 41 of the last 48 `main` runs, so this looks flaky rather than broken. Reproducing with repeats.",
  reproduce: {
    command: "npx playwright test e2e/settings.spec.ts:41 --repeat-each=10 --workers=4",
    description: "Repeat the flaky test",
    output: `Running 10 tests using 4 workers
  ✘  3 [chromium] › e2e/settings.spec.ts:41:5 › settings › saves notification preferences (repeat3) (30.0s)
  ✘  8 [chromium] › e2e/settings.spec.ts:41:5 › settings › saves notification preferences (repeat8) (30.0s)

  2 failed
  8 passed (1.4m)`,
    ms: 86_200,
    isError: true,
  },
  read: {
    path: "src/app/settings/notifications/preferences-form.tsx",
    firstLine: 18,
    text: `  const form = useForm<Preferences>({ defaultValues: data });
  const { isDirty, isSubmitting } = form.formState;

  useEffect(() => {
    form.reset(data);
  }, [data]);`,
  },
  rootCause:
    "When the preferences query refetches on window focus, `form.reset(data)` (preferences-form.tsx:21-23) clears `isDirty` after the test checked the box, so Save stays disabled: a race between a background refetch and user input.",
  diagnosis: `# Diagnosis: background refetch resets the form while the user is editing

**Check:** \`CI / e2e\` · **Test:** \`e2e/settings.spec.ts:41 › settings › saves notification preferences\` · flaky (2/10 locally, 7/48 on \`main\` this week)

## Root cause

\`preferences-form.tsx:21-23\` calls \`form.reset(data)\` whenever the query data changes. The query refetches on window focus; when the refetch lands between \`.check()\` and \`.click()\`, the reset clears the edit, \`isDirty\` turns false and **Save preferences** is disabled until the timeout.

This is a product bug users can hit too (an edit silently discarded after switching tabs), not only a test problem.

## Recommendation

Only reset when the form is pristine (\`if (!form.formState.isDirty) form.reset(data)\`), or disable refetch-on-focus for this query. Either changes product behaviour, so the settings owners (@acme/web-console-settings) should choose.
`,
  closingDiagnose:
    "**Root cause:** a refetch-on-focus calls `form.reset(data)` and discards the in-progress edit, so Save stays disabled. Flaky in CI, but a real bug for users too.\n\nSee `diagnosis.md`.",
  giveUp: {
    tries: {
      command: "npx playwright test e2e/settings.spec.ts:41 --repeat-each=20 --workers=4",
      description: "Check the candidate fix for flakiness",
      output: `Running 20 tests using 4 workers
  ✘ 11 [chromium] › e2e/settings.spec.ts:41:5 › settings › saves notification preferences (repeat11) (30.0s)

  1 failed
  19 passed (2.6m)`,
      ms: 158_000,
      isError: true,
    },
    message:
      "Guarding the reset with `isDirty` reduced the failures from 2/10 to 1/20 but did not remove them: the remaining failure is a second refetch triggered by the mutation's `onSettled` invalidation. Fixing that properly means choosing between discarding and merging concurrent server changes, a product decision.\n\n**Escalating to the settings owners** (@acme/web-console-settings) with the diagnosis attached; no patch is proposed.",
    reason: "the agent gave up: the fix needs a product decision (discard or merge concurrent edits), and the best candidate still failed 1 of 20 repeats",
  },
};
