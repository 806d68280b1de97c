import { betterAuth } from "better-auth";
import { prismaAdapter } from "better-auth/adapters/prisma";
import { nextCookies } from "better-auth/next-js";
import { getDb } from "@/server/db";
import { env } from "@/server/env";

// Development and tests may run on a fixed secret; production must set one.
const DEV_SECRET = "airlock-development-secret-change-me-0123456789";

function createAuth() {
  // `npm start` generates one per installation (.airlock/auth-secret) and passes it in.
  if (!env.BETTER_AUTH_SECRET && env.NODE_ENV === "production") {
    throw new Error("BETTER_AUTH_SECRET is not set: sessions cannot be signed");
  }
  const github =
    env.GITHUB_CLIENT_ID && env.GITHUB_CLIENT_SECRET
      ? { github: { clientId: env.GITHUB_CLIENT_ID, clientSecret: env.GITHUB_CLIENT_SECRET } }
      : undefined;
  return betterAuth({
    appName: "Airlock",
    secret: env.BETTER_AUTH_SECRET ?? DEV_SECRET,
    baseURL: env.AIRLOCK_URL ?? `http://localhost:${env.PORT}`,
    database: prismaAdapter(getDb(), { provider: "postgresql" }),
    emailAndPassword: { enabled: true, minPasswordLength: 8, autoSignIn: true },
    socialProviders: github,
    session: { expiresIn: 60 * 60 * 24 * 7, updateAge: 60 * 60 * 24 },
    advanced: { useSecureCookies: env.AIRLOCK_SECURE_COOKIES },
    plugins: [nextCookies()],
  });
}

type Auth = ReturnType<typeof createAuth>;
const globalForAuth = globalThis as unknown as { airlockAuth?: Auth };

/** better-auth, created on first use (it needs the database client). */
export function getAuth(): Auth {
  globalForAuth.airlockAuth ??= createAuth();
  return globalForAuth.airlockAuth;
}

export const githubSignInEnabled = () => Boolean(env.GITHUB_CLIENT_ID && env.GITHUB_CLIENT_SECRET);
