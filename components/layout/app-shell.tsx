"use client";

import { Keyboard } from "lucide-react";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import { NuqsAdapter } from "nuqs/adapters/next/app";
import { useState } from "react";
import { authClient } from "@/components/providers/auth-client";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { NotificationBell } from "@/components/notifications/notification-bell";
import { consoleNav } from "./nav";
import { ShortcutsDialog } from "./shortcuts-dialog";
import { ThemeSwitch } from "./theme-switch";
import { useGlobalShortcuts } from "./use-global-shortcuts";

type ShellUser = { name: string; email: string; isAdmin: boolean };

export function AppShell({ user, children }: { user: ShellUser; children: React.ReactNode }) {
  const pathname = usePathname();
  const activeHref = consoleNav
    .filter((item) => pathname === item.href || pathname.startsWith(`${item.href}/`))
    .reduce<string | null>((best, item) => (best === null || item.href.length > best.length ? item.href : best), null);
  const router = useRouter();
  const [help, setHelp] = useState(false);
  useGlobalShortcuts(() => setHelp(true));
  return (
    <div className="flex min-h-screen flex-col">
      <header className="sticky top-0 z-30 border-b border-zinc-200 bg-white/90 backdrop-blur dark:border-zinc-800 dark:bg-zinc-950/90">
        <div className="mx-auto flex h-12 max-w-[1600px] items-center gap-6 px-4">
          <Link href="/runs" className="flex items-center gap-2 font-semibold">
            <span className="flex size-6 items-center justify-center rounded bg-indigo-600 font-mono text-xs font-bold text-white">
              A
            </span>
            Airlock
          </Link>
          <nav aria-label="Main" className="flex items-center gap-1 overflow-x-auto">
            {consoleNav.map((item) => {
              // The longest matching entry is the page (Repositories lives under Settings).
              const active = item.href === activeHref;
              return (
                <Link
                  key={item.href}
                  href={item.href}
                  aria-current={active ? "page" : undefined}
                  className={cn(
                    "rounded-md px-2.5 py-1.5 text-sm text-zinc-600 hover:bg-zinc-100 hover:text-zinc-900 dark:text-zinc-400 dark:hover:bg-zinc-800 dark:hover:text-zinc-100",
                    active && "bg-zinc-100 font-medium text-zinc-900 dark:bg-zinc-800 dark:text-zinc-100",
                  )}
                >
                  {item.label}
                </Link>
              );
            })}
          </nav>
          <div className="ml-auto flex items-center gap-3 text-sm">
            <NotificationBell />
            <ThemeSwitch />
            <button
              type="button"
              aria-label="Keyboard shortcuts"
              title="Keyboard shortcuts (?)"
              onClick={() => setHelp(true)}
              className="flex size-7 items-center justify-center rounded-md text-zinc-600 hover:bg-zinc-100 focus-visible:outline-2 focus-visible:outline-indigo-500 dark:text-zinc-400 dark:hover:bg-zinc-800"
            >
              <Keyboard aria-hidden className="size-4" />
            </button>
            <span className="hidden text-zinc-600 sm:inline dark:text-zinc-400" title={user.email}>
              {user.name}
              {user.isAdmin && <span className="ml-1 text-xs text-indigo-600 dark:text-indigo-400">admin</span>}
            </span>
            <Button
              size="sm"
              variant="ghost"
              onClick={async () => {
                await authClient.signOut();
                router.replace("/sign-in");
                router.refresh();
              }}
            >
              Sign out
            </Button>
          </div>
        </div>
      </header>
      <main className="mx-auto w-full max-w-[1600px] flex-1 px-4 py-6">
        {/* Lists keep their filters in the URL (nuqs). */}
        <NuqsAdapter>{children}</NuqsAdapter>
      </main>
      <ShortcutsDialog open={help} onClose={() => setHelp(false)} />
    </div>
  );
}
