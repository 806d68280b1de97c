import { getDb } from "@/server/db";
import { getAuth } from "./index";
import type { SessionUser } from "./roles";

/** The signed-in user for a request, with Airlock's own fields, or null. */
export async function userFromHeaders(headers: Headers): Promise<SessionUser | null> {
  const session = await getAuth().api.getSession({ headers });
  if (!session) return null;
  const user = await getDb().user.findUnique({
    where: { id: session.user.id },
    select: { id: true, email: true, name: true, isAdmin: true },
  });
  return user;
}
