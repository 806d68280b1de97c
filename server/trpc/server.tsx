import "server-only";
import { dehydrate, HydrationBoundary, type QueryKey } from "@tanstack/react-query";
import { TRPCError } from "@trpc/server";
import { createTRPCOptionsProxy } from "@trpc/tanstack-react-query";
import { headers } from "next/headers";
import { notFound } from "next/navigation";
import { cache } from "react";
import { makeQueryClient } from "@/components/providers/query-client";
import { userFromHeaders } from "@/server/auth/session";
import { createTRPCContext } from "./init";
import { appRouter, createCaller } from "./root";

// Server components reach tRPC in-process: same procedures, same checks.
const createContext = cache(async () => createTRPCContext({ user: await userFromHeaders(await headers()) }));

export const getQueryClient = cache(makeQueryClient);

export const trpc = createTRPCOptionsProxy({ ctx: createContext, router: appRouter, queryClient: getQueryClient });

/** A direct caller for server components that need data, not a query cache. */
export const serverCaller = cache(async () => createCaller(await createContext()));

/** The signed-in user for this request (cached per request). */
export const currentUser = cache(async () => (await createContext()).user);

export function HydrateClient({ children }: { children: React.ReactNode }) {
  return <HydrationBoundary state={dehydrate(getQueryClient())}>{children}</HydrationBoundary>;
}

/**
 * After a detail page prefetched its record: when the procedure answered NOT_FOUND (the id in the
 * path names nothing), the route renders its not-found page. Other errors are left to the page.
 */
export function notFoundIfMissing(queryKey: QueryKey) {
  const error = getQueryClient().getQueryState(queryKey)?.error;
  if (error instanceof TRPCError && error.code === "NOT_FOUND") notFound();
}
