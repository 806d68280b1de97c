import { createCallerFactory, router } from "./init";
import { apiTokensRouter } from "./routers/api-tokens";
import { approvalsRouter } from "./routers/approvals";
import { auditRouter } from "./routers/audit";
import { configFilesRouter } from "./routers/config-files";
import { deliveriesRouter } from "./routers/deliveries";
import { demoRouter } from "./routers/demo";
import { githubAppRouter } from "./routers/github-app";
import { fixLoopsRouter } from "./routers/fix-loops";
import { metricsRouter } from "./routers/metrics";
import { notificationsRouter } from "./routers/notifications";
import { policiesRouter } from "./routers/policies";
import { poolsRouter } from "./routers/pools";
import { proofsRouter } from "./routers/proofs";
import { repositoriesRouter } from "./routers/repositories";
import { repositorySettingsRouter } from "./routers/repositories-settings";
import { runsRouter } from "./routers/runs";
import { stacksRouter } from "./routers/stacks";
import { triageRouter } from "./routers/triage";
import { triggersRouter } from "./routers/triggers";
import { invitationRouter, usersRouter } from "./routers/users";
import { writeBacksRouter } from "./routers/write-backs";

export const appRouter = router({
  runs: runsRouter,
  repositories: repositoriesRouter,
  policies: policiesRouter,
  proofs: proofsRouter,
  metrics: metricsRouter,
  audit: auditRouter,
  stacks: stacksRouter,
  triggers: triggersRouter,
  pools: poolsRouter,
  repositorySettings: repositorySettingsRouter,
  approvals: approvalsRouter,
  writeBacks: writeBacksRouter,
  fixLoops: fixLoopsRouter,
  notifications: notificationsRouter,
  triage: triageRouter,
  users: usersRouter,
  invitation: invitationRouter,
  apiTokens: apiTokensRouter,
  configFiles: configFilesRouter,
  deliveries: deliveriesRouter,
  githubApp: githubAppRouter,
  demo: demoRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
