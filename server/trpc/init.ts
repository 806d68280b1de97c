import { initTRPC, TRPCError } from "@trpc/server";
import superjson from "superjson";
import { z } from "zod";
import type { RepoRole } from "@/server/db";
import { getDb, type PrismaClient } from "@/server/db";
import { repositoryRole, roleAtLeast, visibleRepositoryIds, type SessionUser } from "@/server/auth/roles";
import { AppError, type AppErrorCode } from "@/server/errors";
import { describeTextProblem, findTextProblem } from "@/server/lib/text-boundary";
import { zId } from "@/server/lib/ids";
import type { Limiter } from "@/server/http/rate-limit";
import { formatError } from "./error-format";
import { logError } from "@/server/observability/log";

export type TRPCContext = {
  db: PrismaClient;
  user: SessionUser | null;
  /** Injected so tests control time. */
  now: () => Date;
  /** The HTTP route's mutation limit (absent for in-process callers: server components, tests). */
  mutationLimit?: Limiter;
  /** The client's address as the web server saw it (the key of a signed-out caller's limit). */
  clientIp?: string | null;
};

/** The context for a request; the route resolves the user from its cookies. */
export function createTRPCContext(opts: {
  user: SessionUser | null;
  db?: PrismaClient;
  now?: () => Date;
  mutationLimit?: Limiter;
  clientIp?: string | null;
}): TRPCContext {
  return { db: opts.db ?? getDb(), user: opts.user, now: opts.now ?? (() => new Date()), mutationLimit: opts.mutationLimit, clientIp: opts.clientIp ?? null };
}

const trpcCode: Record<AppErrorCode, TRPCError["code"]> = {
  BAD_REQUEST: "BAD_REQUEST",
  UNAUTHORIZED: "UNAUTHORIZED",
  FORBIDDEN: "FORBIDDEN",
  NOT_FOUND: "NOT_FOUND",
  CONFLICT: "CONFLICT",
  PAYLOAD_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  PRECONDITION_FAILED: "PRECONDITION_FAILED",
  UNPROCESSABLE: "UNPROCESSABLE_CONTENT",
  TOO_MANY_REQUESTS: "TOO_MANY_REQUESTS",
  INTERNAL: "INTERNAL_SERVER_ERROR",
  UNAVAILABLE: "SERVICE_UNAVAILABLE",
};

// superjson walks the input recursively, so JSON nested tens of thousands deep overflows its
// stack: say what is wrong with the body rather than pass the engine's RangeError on as the message.
const transformer = {
  serialize: (value: unknown) => superjson.serialize(value),
  deserialize: (payload: unknown) => {
    try {
      return superjson.deserialize(payload as Parameters<typeof superjson.deserialize>[0]);
    } catch (err) {
      if (err instanceof RangeError) {
        const message = "Invalid input: the body is nested too deeply to read.";
        throw new TRPCError({ code: "BAD_REQUEST", message, cause: new AppError("BAD_REQUEST", message, { reason: "invalid_text" }) });
      }
      throw err;
    }
  },
};

const t = initTRPC.context<TRPCContext>().create({
  transformer,
  errorFormatter: formatError,
});

export const createCallerFactory = t.createCallerFactory;
export const router = t.router;

// Domain code throws AppError; translate it once, here.
const translateErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof AppError) {
    const cause = result.error.cause;
    throw new TRPCError({ code: trpcCode[cause.code], message: cause.message, cause });
  }
  if (!result.ok && result.error.code === "INTERNAL_SERVER_ERROR") {
    logError("trpc procedure", result.error.cause ?? result.error);
  }
  return result;
});

// The text boundary for typed input: a NUL, an unpaired surrogate or hostile nesting anywhere in
// the raw input is a 400 naming the field, before zod or the database sees it (they would 500).
const textBoundary = t.middleware(async ({ getRawInput, next }) => {
  const problem = findTextProblem(await getRawInput());
  if (problem) throw new AppError("BAD_REQUEST", `Invalid input: ${describeTextProblem(problem)}`, { reason: "invalid_text", details: { ...problem } });
  return next();
});

// Every mutation counts against its caller's limit (per account, or per address signed out).
const limitMutations = t.middleware(async ({ ctx, type, next }) => {
  if (type === "mutation" && ctx.mutationLimit) {
    const verdict = await ctx.mutationLimit(ctx.user ? `user:${ctx.user.id}` : `ip:${ctx.clientIp ?? "unknown"}`);
    if (!verdict.ok) {
      throw new AppError("TOO_MANY_REQUESTS", `Too many changes in a minute; try again in ${verdict.retryAfterSeconds} s.`, {
        reason: "rate_limited",
        details: { retryAfterSeconds: verdict.retryAfterSeconds },
      });
    }
  }
  return next();
});

export const publicProcedure = t.procedure.use(translateErrors).use(textBoundary).use(limitMutations);

export const protectedProcedure = publicProcedure.use(({ ctx, next }) => {
  if (!ctx.user) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in to continue." });
  return next({ ctx: { ...ctx, user: ctx.user } });
});

export const adminProcedure = protectedProcedure.use(({ ctx, next }) => {
  if (!ctx.user.isAdmin) throw new TRPCError({ code: "FORBIDDEN", message: "Only an Airlock admin can do this." });
  return next();
});

/**
 * A signed-in user with a role somewhere (any repository, or a global admin): what is global
 * (stacks with their prompts and commands, policies, pools, grant names, trigger rules for every
 * repository) is configuration of the repositories they work on. An account with no role yet sees
 * its own profile and nothing else.
 */
export const memberProcedure = protectedProcedure.use(async ({ ctx, next }) => {
  const visible = await visibleRepositoryIds(ctx.db, ctx.user);
  if (visible !== "all" && visible.length === 0) {
    throw new TRPCError({ code: "FORBIDDEN", message: "You have no role on any repository yet: ask an Airlock admin for one." });
  }
  return next();
});

/** Checks the user's role on a repository; throws FORBIDDEN without it. */
export async function requireRepositoryRole(
  ctx: { db: PrismaClient; user: SessionUser },
  repositoryId: string,
  min: RepoRole,
): Promise<RepoRole> {
  const role = await repositoryRole(ctx.db, ctx.user, repositoryId);
  if (!roleAtLeast(role, min)) {
    throw new TRPCError({
      code: "FORBIDDEN",
      message:
        role === null
          ? "You have no role on this repository."
          : `This needs the ${min} role on the repository; you are ${role}.`,
    });
  }
  return role as RepoRole;
}

const zRepositoryInput = z.object({ repositoryId: zId });
const zRunInput = z.object({ runId: zId });

/**
 * A procedure for one repository: its input names `repositoryId`; the user's
 * role is checked before the resolver runs and put on ctx.
 */
export const repositoryProcedure = (min: RepoRole) =>
  protectedProcedure.input(zRepositoryInput).use(async ({ ctx, input, next }) => {
    const role = await requireRepositoryRole(ctx, input.repositoryId, min);
    return next({ ctx: { ...ctx, role, repositoryId: input.repositoryId } });
  });

/** A procedure for one run: its input names `runId`; the role is checked on the run's repository. */
export const runProcedure = (min: RepoRole) =>
  protectedProcedure.input(zRunInput).use(async ({ ctx, input, next }) => {
    const run = await ctx.db.agentDispatchRun.findUnique({ where: { id: input.runId }, select: { repositoryId: true } });
    if (!run) throw new TRPCError({ code: "NOT_FOUND", message: "No such run." });
    const role = await requireRepositoryRole(ctx, run.repositoryId, min);
    return next({ ctx: { ...ctx, role, repositoryId: run.repositoryId } });
  });
