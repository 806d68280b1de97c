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

function Stamp({ date, className, live = true, children }: TimeProps & { live?: boolean; children: React.ReactNode }) {
  return (
    <Tooltip content={formatAbsolute(date)} className={cn("whitespace-nowrap", className)}>
      {/* Server HTML and hydration may read different clocks, and React keeps the server's text
          when they differ: the first live render remounts the element, so its text is the client's. */}
      <time key={live ? "live" : "first"} dateTime={iso(date)} suppressHydrationWarning>
        {children}
      </time>
    </Tooltip>
  );
}

export function RelativeTime({ date, className }: TimeProps) {
  // Null in server HTML and hydration: formatRelative then reads the clock itself.
  const now = useNow();
  return (
    <Stamp date={date} className={className} live={now !== null}>
      {formatRelative(date, now ?? undefined)}
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
