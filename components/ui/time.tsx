"use client";

import { cn } from "./cn";
import { formatAbsolute, formatClock, formatRelative } from "./format";
import { Tooltip } from "./tooltip";
import { useHydrated } from "./use-hydrated";
import { useNow } from "./use-now";

// The one way a time is shown: relative ("5 min ago", kept current as time passes) or the time
// of day (the transcript's HH:MM:SS), with the full local date, time and zone on hover.
// Relative times in server HTML use the server's clock; the client's takes over within a second.

type TimeProps = { date: Date | number | string; className?: string };

const iso = (date: TimeProps["date"]) => new Date(date).toISOString();

function Stamp({ date, className, children }: TimeProps & { children: React.ReactNode }) {
  return (
    <Tooltip content={formatAbsolute(date)} className={cn("whitespace-nowrap", className)}>
      <time dateTime={iso(date)} suppressHydrationWarning>
        {children}
      </time>
    </Tooltip>
  );
}

export function RelativeTime({ date, className }: TimeProps) {
  // Null in server HTML and hydration: formatRelative then reads the clock itself.
  const now = useNow() ?? undefined;
  return (
    <Stamp date={date} className={className}>
      {formatRelative(date, now)}
    </Stamp>
  );
}

export function ClockTime({ date, className }: TimeProps) {
  // Server HTML and hydration agree on UTC; the render after hydration shows the viewer's zone.
  const hydrated = useHydrated();
  return (
    <Stamp date={date} className={className}>
      {formatClock(date, hydrated ? {} : { timeZone: "UTC" })}
    </Stamp>
  );
}
