import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@/server/trpc/root";

type Outputs = inferRouterOutputs<AppRouter>;

/** What runs.byId returns: the run page's read model. */
export type RunDetailView = Outputs["runs"]["byId"];
export type RunListPage = Outputs["runs"]["list"];
