import { hashPassword } from "better-auth/crypto";
import type { PrismaClient } from "@/server/db";
import { env } from "@/server/env";
import logins from "./demo-logins.json";

// Demo users. better-auth (email + password) keeps people in `User` and their
// credentials in `Account` rows with providerId "credential"; the hash is its
// own scrypt format, so sign-in through better-auth works unchanged.

// One list of demo users, shared with `npm start` (which prints it) and e2e tests.
export const demoPassword = env.AIRLOCK_DEMO_PASSWORD ?? logins.defaultPassword;

export type DemoUserKey = "admin" | "maintainer" | "viewer";
type DemoUser = { id: string; email: string; name: string; login: string; isAdmin: boolean };

function user(key: DemoUserKey): DemoUser {
  const u = logins.users.find((x) => x.key === key);
  if (!u) throw new Error(`demo-logins.json has no ${key}`);
  return u;
}

export const demoUsers: Record<DemoUserKey, DemoUser> = { admin: user("admin"), maintainer: user("maintainer"), viewer: user("viewer") };

/** What the start script prints. The password is the one a fresh seed sets. */
export const demoLogins = logins.users.map((u) => ({ email: u.email, password: demoPassword, role: u.role }));

/**
 * Creates the demo users. An existing user is left as it is (name, role and
 * password may have been changed on purpose); only a missing credential account
 * is added. Hashing (scrypt, ~100 ms of CPU per password, off the main thread)
 * starts at once; `addCredentials` inserts the accounts once it is done, so the
 * caller can seed other tables meanwhile.
 */
export async function seedUsers(db: PrismaClient, now: Date): Promise<{ ids: Record<DemoUserKey, string>; addCredentials: () => Promise<void> }> {
  const createdAt = new Date(now.getTime() - 14 * 24 * 3600_000);
  await db.user.createMany({
    data: Object.values(demoUsers).map((u) => ({ id: u.id, email: u.email, name: u.name, isAdmin: u.isAdmin, emailVerified: true, createdAt, updatedAt: createdAt })),
    skipDuplicates: true,
  });
  const ids = await loadUserIds(db);
  const withCredential = await db.account.findMany({ where: { providerId: "credential", userId: { in: Object.values(ids) } }, select: { userId: true } });
  const missing = Object.values(ids).filter((id) => !withCredential.some((a) => a.userId === id));
  const accounts = Promise.all(
    missing.map(async (userId) => ({
      id: `acct_${userId}`,
      accountId: userId,
      providerId: "credential",
      userId,
      password: await hashPassword(demoPassword),
      createdAt,
      updatedAt: createdAt,
    })),
  );
  return {
    ids,
    addCredentials: async () => {
      const data = await accounts;
      if (data.length > 0) await db.account.createMany({ data, skipDuplicates: true });
    },
  };
}

/** The demo users' ids as stored (a pre-existing user keeps its own id). */
export async function loadUserIds(db: PrismaClient): Promise<Record<DemoUserKey, string>> {
  const rows = await db.user.findMany({
    where: { email: { in: Object.values(demoUsers).map((u) => u.email) } },
    select: { id: true, email: true },
  });
  const byEmail = new Map(rows.map((r) => [r.email, r.id]));
  const get = (k: DemoUserKey) => {
    const id = byEmail.get(demoUsers[k].email);
    if (!id) throw new Error(`seed: user ${demoUsers[k].email} is missing`);
    return id;
  };
  return { admin: get("admin"), maintainer: get("maintainer"), viewer: get("viewer") };
}
