"use client";

import { Monitor, Moon, Sun } from "lucide-react";
import { setTheme, useTheme } from "@/components/providers/theme";
import type { ThemeChoice } from "@/components/providers/theme-script";
import { cn } from "@/components/ui/cn";

const options: { choice: ThemeChoice; label: string; Icon: typeof Sun }[] = [
  { choice: "system", label: "System", Icon: Monitor },
  { choice: "light", label: "Light", Icon: Sun },
  { choice: "dark", label: "Dark", Icon: Moon },
];

/** System, light or dark, in the header; kept in this browser. */
export function ThemeSwitch() {
  const theme = useTheme();
  return (
    <div role="group" aria-label="Theme" className="flex items-center rounded-md border border-zinc-200 p-0.5 dark:border-zinc-700">
      {options.map(({ choice, label, Icon }) => {
        const active = theme?.choice === choice;
        return (
          <button
            key={choice}
            type="button"
            aria-label={label}
            title={`${label} theme`}
            aria-pressed={theme ? active : undefined}
            onClick={() => setTheme(choice)}
            className={cn(
              "flex size-6 items-center justify-center rounded text-zinc-500 hover:text-zinc-900 focus-visible:outline-2 focus-visible:outline-indigo-500 dark:text-zinc-400 dark:hover:text-zinc-100",
              active && "bg-zinc-100 text-zinc-900 dark:bg-zinc-800 dark:text-zinc-100",
            )}
          >
            <Icon aria-hidden className="size-3.5" />
          </button>
        );
      })}
    </div>
  );
}
