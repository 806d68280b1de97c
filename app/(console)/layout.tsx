import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { AppShell } from "@/components/layout/app-shell";
import { currentUser } from "@/server/trpc/server";

export const dynamic = "force-dynamic";

// The session gate for every console page. Procedures check permissions again
// on their own: this only sends signed-out visitors to the sign-in page.
export default async function ConsoleLayout({ children }: { children: React.ReactNode }) {
  const user = await currentUser();
  if (!user) {
    const path = (await headers()).get("x-airlock-path") ?? "/runs";
    redirect(`/sign-in?next=${encodeURIComponent(path)}`);
  }
  return <AppShell user={{ name: user.name, email: user.email, isAdmin: user.isAdmin }}>{children}</AppShell>;
}
