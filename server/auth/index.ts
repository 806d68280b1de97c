import { betterAuth } from "better-auth";
import { prismaAdapter } from "better-auth/adapters/prisma";
import { nextCookies } from "better-auth/next-js";
import { genericOAuth } from "better-auth/plugins/generic-oauth";
import { getDb, type PrismaClient } from "@/server/db";
import { hasOpenInvitation } from "@/server/domain/users/invitations";
import { env, rateLimitsOn } from "@/server/env";
import { CLIENT_IP_HEADER } from "@/server/web/client-ip";
import { admitUser, afterUserCreated, type AdmissionSettings } from "./admission";
import { gitHubProfile, type GitHubSignInConfig } from "./github";

// Development and tests may run on a fixed secret; production must set one.
const DEV_SECRET = "airlock-development-secret-change-me-0123456789";


export type AuthSettings = {
  db: PrismaClient;
  secret: string;
  baseURL: string;
  github: GitHubSignInConfig | null;
  admission: AdmissionSettings;
  rateLimit: boolean;
  secureCookies: boolean;
};

function settingsFromEnv(): AuthSettings {
  // `npm start` generates one per installation (.airlock/auth-secret) and passes it in.
  if (!env.BETTER_AUTH_SECRET && env.NODE_ENV === "production") {
    throw new Error("BETTER_AUTH_SECRET is not set: sessions cannot be signed");
  }
  const org = env.AIRLOCK_GITHUB_ORG ?? null;
  return {
    db: getDb(),
    secret: env.BETTER_AUTH_SECRET ?? DEV_SECRET,
    baseURL: env.AIRLOCK_URL ?? `http://localhost:${env.PORT}`,
    github:
      env.GITHUB_CLIENT_ID && env.GITHUB_CLIENT_SECRET
        ? {
            clientId: env.GITHUB_CLIENT_ID,
            clientSecret: env.GITHUB_CLIENT_SECRET,
            webUrl: env.GITHUB_URL,
            apiUrl: env.GITHUB_API_URL ?? "https://api.github.com",
            org,
            team: env.AIRLOCK_GITHUB_TEAM ?? null,
          }
        : null,
    admission: { emailSignUp: env.AIRLOCK_EMAIL_SIGN_UP, org, team: env.AIRLOCK_GITHUB_TEAM ?? null },
    rateLimit: rateLimitsOn(env),
    secureCookies: env.AIRLOCK_SECURE_COOKIES,
  };
}

/** GitHub sign-in as a generic OAuth provider: its endpoints are configurable (GHES, and the tests' double). */
function gitHubProvider(db: PrismaClient, github: GitHubSignInConfig) {
  const web = github.webUrl.replace(/\/$/, "");
  return genericOAuth({
    config: [
      {
        providerId: "github",
        clientId: github.clientId,
        clientSecret: github.clientSecret,
        authorizationUrl: `${web}/login/oauth/authorize`,
        tokenUrl: `${web}/login/oauth/access_token`,
        scopes: ["read:user", "user:email", ...(github.org ? ["read:org"] : [])],
        accountSubject: ({ profile }) => String((profile as { id?: unknown }).id ?? ""),
        getUserInfo: async (tokens) => {
          if (!tokens.accessToken) return null;
          // The account's email: a verified one an admin invited, else the primary verified one.
          const prefer = async (verified: string[]) => {
            for (const email of verified) if (await hasOpenInvitation(db, email)) return email;
            return null;
          };
          return gitHubProfile(github, tokens.accessToken, prefer);
        },
      },
    ],
  });
}

export function createAuth(settings: AuthSettings) {
  const { db } = settings;
  return betterAuth({
    appName: "Airlock",
    secret: settings.secret,
    baseURL: settings.baseURL,
    database: prismaAdapter(db, { provider: "postgresql" }),
    // Accounts are by invitation: the sign-up endpoint is off unless AIRLOCK_EMAIL_SIGN_UP.
    emailAndPassword: { enabled: true, minPasswordLength: 8, autoSignIn: true, disableSignUp: !settings.admission.emailSignUp },
    user: {
      additionalFields: { admittedVia: { type: "string", required: false, input: false } },
      validateUserInfo: (data) => admitUser(db, settings.admission, data),
    },
    databaseHooks: {
      user: {
        create: {
          after: async (user, ctx) => afterUserCreated(db, user, ctx?.path?.startsWith("/callback") ? "github" : "sign_up"),
        },
      },
    },
    session: { expiresIn: 60 * 60 * 24 * 7, updateAge: 60 * 60 * 24 },
    // Sign-in (3 per 10 s per address and path, better-auth's rule) and every other auth endpoint
    // (100 per minute), counted in PostgreSQL so the limit holds across web processes.
    rateLimit: { enabled: settings.rateLimit, storage: "database", window: 60, max: 100 },
    advanced: { useSecureCookies: settings.secureCookies, ipAddress: { ipAddressHeaders: [CLIENT_IP_HEADER] } },
    plugins: [nextCookies(), ...(settings.github ? [gitHubProvider(db, settings.github)] : [])],
  });
}

type Auth = ReturnType<typeof createAuth>;
const globalForAuth = globalThis as unknown as { airlockAuth?: Auth };

/** better-auth, created on first use (it needs the database client). */
export function getAuth(): Auth {
  globalForAuth.airlockAuth ??= createAuth(settingsFromEnv());
  return globalForAuth.airlockAuth;
}

export const githubSignInEnabled = () => Boolean(env.GITHUB_CLIENT_ID && env.GITHUB_CLIENT_SECRET);
